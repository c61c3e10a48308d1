/* th_nn_dw_mult_s8: DEPTHWISE_CONV_2D with a channel multiplier > 1 and at most
 * TH_DW_MULT_TAPS filter taps (DSP builds; th_dw_conv_general_s8 picks it, path DW_MULT).
 *
 * Input channel by input channel, output pixel by output pixel: the taps of the pixel's
 * window are gathered once as int16 pairs (-input_offset outside the input; the offset is
 * folded into each output channel's start value), held in registers, and shared by the
 * ch_mult output channels of that input channel; each output channel is then one chain of
 * ceil(taps / 2) SMLADs over its weight pairs, which the kernel widens once per input channel
 * into scratch with the start value and the requantization constants (a record). With the
 * fast requantization (every channel of the input channel) the weights are doubled, which
 * saves its shift; otherwise the exact requantization, one output at a time. Windows inside
 * the input read their taps at offsets computed once per call; the others check each tap. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"

#if TH_NN_HAS_DSP && !TH_NN_MVE

#define DWM_KP_MAX (TH_DW_MULT_TAPS / 2)

/* Record of one output channel (kp + 4 words, in the order the loops load them): start
 * value, kp weight pairs in tap order (row-major (ky, kx); an odd count ends (w, 0)), then
 * multiplier, round_zp (exact: shift), e. */
#define DWM_ACC 0
#define DWM_W 1
#define DWM_MULT(kp) (1 + (kp))
#define DWM_RZP(kp) (2 + (kp))
#define DWM_E(kp) (3 + (kp))
#define DWM_RW(kp) (4 + (kp))

typedef struct {
    const int8_t *in; /* input channel ic of one batch */
    int8_t *out; /* output channel ic * ch_mult of one batch */
    const int32_t *rec; /* ch_mult records, rw words each */
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t kh, kw, sh, sw, dh, dw, pt, pl;
    int32_t mult, kp, rw, taps;
    int32_t pad; /* -input_offset: the value of a tap outside the input */
    int32_t zp, lo, hi;
    int32_t ox_lo, ox_hi; /* output columns whose windows are inside along w */
    int32_t oy_lo, oy_hi; /* ... along h */
    int32_t toff[2 * DWM_KP_MAX]; /* tap byte offsets from the window's first tap (pad 0) */
} dwm_args;

/* Widens the ch_mult records of input channel ic; returns the mode of all of them: 0 fast
 * requantization, 1 fast with the activation clamp, 2 exact. */
static int32_t __attribute__((noinline))
dwm_records(int32_t *rec, const dwm_args *a, int32_t ic, const int8_t *filter,
            const int32_t *bias, const th_per_channel_quant *quant, int32_t input_offset)
{
    const int32_t m = a->mult, oc0 = ic * m;
    const int64_t taps_bound = (int64_t)a->taps * 256 * 128;
    int32_t fast = 1;
    for (int32_t k = 0; k < m; k++) {
        const int32_t b = bias != NULL ? bias[oc0 + k] : 0;
        const int64_t bound = taps_bound + (b < 0 ? -(int64_t)b : b);
        fast &= th_fast_rq_ok(quant->multiplier[oc0 + k], quant->shift[oc0 + k], bound);
    }
    const int32_t clamp = a->lo > -128 || a->hi < 127;
    const int32_t mode = fast ? clamp : 2;
    const uint32_t scale = mode == 2 ? 1u : 2u;
    for (int32_t k = 0; k < m; k++, rec += a->rw) {
        const int32_t oc = oc0 + k;
        int16_t *w = (int16_t *)(void *)(rec + DWM_W);
        int32_t wsum = 0;
        const int8_t *f = filter + oc;
        for (int32_t t = 0; t < a->taps; t++, f += a->out_c) {
            wsum += *f;
            w[t] = (int16_t)(*f * (int32_t)scale);
        }
        if (a->taps & 1) {
            w[a->taps] = 0;
        }
        const int32_t b = bias != NULL ? bias[oc] : 0;
        rec[DWM_ACC] = (int32_t)(((uint32_t)b + (uint32_t)input_offset * (uint32_t)wsum) *
                                 scale);
        const int32_t kp = a->kp;
        rec[DWM_MULT(kp)] = quant->multiplier[oc];
        if (mode == 2) {
            rec[DWM_RZP(kp)] = quant->shift[oc];
            rec[DWM_E(kp)] = 0;
        } else {
            const th_fast_rq rq = th_fast_rq_make(quant->multiplier[oc], quant->shift[oc],
                                                  a->zp);
            rec[DWM_RZP(kp)] = rq.round_zp;
            rec[DWM_E(kp)] = rq.e;
        }
    }
    return mode;
}

/* The pairs of the window at input (iy0, ix0), some taps outside the input. */
static void __attribute__((noinline))
dwm_gather_edge(int32_t *xp, const dwm_args *a, int32_t iy0, int32_t ix0)
{
    int16_t v[2 * DWM_KP_MAX + 1];
    int32_t t = 0;
    for (int32_t ky = 0; ky < a->kh; ky++) {
        const int32_t iy = iy0 + ky * a->dh;
        for (int32_t kx = 0; kx < a->kw; kx++, t++) {
            const int32_t ix = ix0 + kx * a->dw;
            v[t] = (int16_t)(iy >= 0 && iy < a->in_h && ix >= 0 && ix < a->in_w
                                 ? a->in[((int64_t)iy * a->in_w + ix) * a->in_c]
                                 : a->pad);
        }
    }
    v[t] = 0; /* an odd count's last pair: its weight is 0 */
    for (int32_t p = 0; p < a->kp; p++) {
        xp[p] = th_pkhbt(v[2 * p], v[2 * p + 1]);
    }
}

/* Exact requantization and clamp, one output channel at a time (record mode 2). */
static void __attribute__((noinline)) dwm_exact(const int32_t *xp, const dwm_args *a,
                                                int8_t *out)
{
    const int32_t *rec = a->rec;
    for (int32_t k = a->mult; k > 0; k--, rec += a->rw) {
        int32_t acc = rec[DWM_ACC];
        for (int32_t p = 0; p < a->kp; p++) {
            acc = th_smlad(xp[p], rec[DWM_W + p], acc);
        }
        const int32_t y = th_requantize_s8(acc, rec[DWM_MULT(a->kp)], rec[DWM_RZP(a->kp)],
                                           a->zp);
        *out++ = (int8_t)th_clamp(y, a->lo, a->hi);
    }
}

#if TH_NN_DSP_NATIVE
/* The m (>= 1) outputs of one pixel, record mode 0, KP <= 5: one pass per output channel
 * loads its record with two LDMs (r4 the accumulator, r5-r9 weights and constants). */
#define DWM_LOOP_HEAD "1:\n\tldmia %[rec]!, {r4, r5, r6, r8, r9}\n\t"
#define DWM_LOOP_TAIL(y)                                                                     \
    "ssat " y ", #8, " y "\n\tstrb " y ", [%[out]], #1\n\tcmp %[out], %[end]\n\tbne 1b\n"
#define DWM_ASM(body, ...)                                                                   \
    __asm__ volatile(DWM_LOOP_HEAD body                                                      \
                     : [rec] "+r"(rec), [out] "+r"(out)                                      \
                     : [end] "r"(end), __VA_ARGS__                                           \
                     : "r4", "r5", "r6", "r8", "r9", "cc", "memory")

TH_INLINE void dwm_pixel_asm(const int32_t *xp, const int32_t *rec, int8_t *out, int32_t m,
                             const int KP)
{
    const int8_t *const end = out + m;
    if (KP == 1) { /* acc w0 mult rzp e */
        DWM_ASM("smlad r4, %[x0], r5, r4\n\tsmmlar r5, r4, r6, r8\n\t"
                "add r5, r5, r4, asr #31\n\tasr r5, r5, r9\n\t" DWM_LOOP_TAIL("r5"),
                [x0] "r"(xp[0]));
    } else if (KP == 2) { /* acc w0 w1 mult rzp; e */
        DWM_ASM("smlad r4, %[x0], r5, r4\n\tsmlad r4, %[x1], r6, r4\n\t"
                "ldr r5, [%[rec]], #4\n\tsmmlar r6, r4, r8, r9\n\t"
                "add r6, r6, r4, asr #31\n\tasr r6, r6, r5\n\t" DWM_LOOP_TAIL("r6"),
                [x0] "r"(xp[0]), [x1] "r"(xp[1]));
    } else if (KP == 3) { /* acc w0 w1 w2 mult; rzp e */
        DWM_ASM("smlad r4, %[x0], r5, r4\n\tsmlad r4, %[x1], r6, r4\n\t"
                "smlad r4, %[x2], r8, r4\n\tldmia %[rec]!, {r5, r6}\n\t"
                "smmlar r8, r4, r9, r5\n\tadd r8, r8, r4, asr #31\n\tasr r8, r8, r6\n\t"
                DWM_LOOP_TAIL("r8"),
                [x0] "r"(xp[0]), [x1] "r"(xp[1]), [x2] "r"(xp[2]));
    } else if (KP == 4) { /* acc w0 w1 w2 w3; mult rzp e */
        DWM_ASM("smlad r4, %[x0], r5, r4\n\tsmlad r4, %[x1], r6, r4\n\t"
                "smlad r4, %[x2], r8, r4\n\tsmlad r4, %[x3], r9, r4\n\t"
                "ldmia %[rec]!, {r5, r6, r8}\n\tsmmlar r5, r4, r5, r6\n\t"
                "add r5, r5, r4, asr #31\n\tasr r5, r5, r8\n\t" DWM_LOOP_TAIL("r5"),
                [x0] "r"(xp[0]), [x1] "r"(xp[1]), [x2] "r"(xp[2]), [x3] "r"(xp[3]));
    } else { /* acc w0 w1 w2 w3; w4 mult rzp e; the end pointer read from the stack (GCC
              * does not find 13 registers around the loop on every core) */
        __asm__ volatile(DWM_LOOP_HEAD
                         "smlad r4, %[x0], r5, r4\n\tsmlad r4, %[x1], r6, r4\n\t"
                         "smlad r4, %[x2], r8, r4\n\tsmlad r4, %[x3], r9, r4\n\t"
                         "ldmia %[rec]!, {r5, r6, r8, r9}\n\tsmlad r4, %[x4], r5, r4\n\t"
                         "smmlar r6, r4, r6, r8\n\tadd r6, r6, r4, asr #31\n\t"
                         "asr r6, r6, r9\n\tssat r6, #8, r6\n\tstrb r6, [%[out]], #1\n\t"
                         "ldr r5, %[end]\n\tcmp %[out], r5\n\tbne 1b\n"
                         : [rec] "+r"(rec), [out] "+r"(out)
                         : [end] "m"(end), [x0] "r"(xp[0]), [x1] "r"(xp[1]), [x2] "r"(xp[2]),
                           [x3] "r"(xp[3]), [x4] "r"(xp[4])
                         : "r4", "r5", "r6", "r8", "r9", "cc", "memory");
    }
}
#undef DWM_ASM
#undef DWM_LOOP_TAIL
#undef DWM_LOOP_HEAD
#endif

/* Every output pixel of one input channel: KP weight pairs, MODE 0 / 1 (fast, clamp) or 2. */
TH_INLINE void dwm_plane(const dwm_args *a, const int KP, const int MODE)
{
    const int32_t rw = DWM_RW(KP);
    const int32_t lo = a->lo, hi = a->hi;
    for (int32_t oy = 0; oy < a->out_h; oy++) {
        const int32_t iy0 = oy * a->sh - a->pt;
        const int32_t row_in = oy >= a->oy_lo && oy < a->oy_hi;
        int8_t *out = a->out + (int64_t)oy * a->out_w * a->out_c;
        for (int32_t ox = 0; ox < a->out_w; ox++, out += a->out_c) {
            const int32_t ix0 = ox * a->sw - a->pl;
            int32_t xp[DWM_KP_MAX];
            if (row_in && ox >= a->ox_lo && ox < a->ox_hi) {
                const int8_t *base = a->in + ((int64_t)iy0 * a->in_w + ix0) * a->in_c;
                _Pragma("GCC unroll 8") for (int32_t p = 0; p < KP; p++) {
                    xp[p] = th_pkhbt(base[a->toff[2 * p]], base[a->toff[2 * p + 1]]);
                }
            } else {
                dwm_gather_edge(xp, a, iy0, ix0);
            }
            if (MODE == 2) {
                dwm_exact(xp, a, out);
                continue;
            }
#if TH_NN_DSP_NATIVE
            if (MODE == 0 && KP <= 5) {
                dwm_pixel_asm(xp, a->rec, out, a->mult, KP);
                continue;
            }
#endif
            const int32_t *rec = a->rec;
            int8_t *o = out;
            for (int32_t k = a->mult; k > 0; k--, rec += rw) {
                int32_t acc = rec[DWM_ACC];
                _Pragma("GCC unroll 8") for (int32_t p = 0; p < KP; p++) {
                    acc = th_smlad(xp[p], rec[DWM_W + p], acc);
                }
                int32_t y = th_smmlar(acc, rec[DWM_MULT(KP)], rec[DWM_RZP(KP)]);
                y += acc >> 31;
                y = th_ssat8(y >> rec[DWM_E(KP)]);
                if (MODE == 1) {
                    y = th_clamp(y, lo, hi);
                }
                *o++ = (int8_t)y;
            }
        }
    }
}

typedef void (*dwm_fn)(const dwm_args *a);

#define DWM_FNS(KP)                                                                          \
    static void dwm_k##KP##_fast(const dwm_args *a)                                          \
    {                                                                                        \
        dwm_plane(a, KP, 0);                                                                 \
    }                                                                                        \
    static void dwm_k##KP##_clamp(const dwm_args *a)                                         \
    {                                                                                        \
        dwm_plane(a, KP, 1);                                                                 \
    }
DWM_FNS(1)
DWM_FNS(2)
DWM_FNS(3)
DWM_FNS(4)
DWM_FNS(5)
DWM_FNS(6)
DWM_FNS(7)
DWM_FNS(8)
#undef DWM_FNS

static void dwm_any_exact(const dwm_args *a)
{
    dwm_plane(a, DWM_KP_MAX, 2);
}

static dwm_fn dwm_pick(int32_t kp, int32_t mode)
{
    static const dwm_fn fns[DWM_KP_MAX][2] = {
        {dwm_k1_fast, dwm_k1_clamp}, {dwm_k2_fast, dwm_k2_clamp}, {dwm_k3_fast, dwm_k3_clamp},
        {dwm_k4_fast, dwm_k4_clamp}, {dwm_k5_fast, dwm_k5_clamp}, {dwm_k6_fast, dwm_k6_clamp},
        {dwm_k7_fast, dwm_k7_clamp}, {dwm_k8_fast, dwm_k8_clamp},
    };
    return mode == 2 ? dwm_any_exact : fns[kp - 1][mode];
}

/* First output index o whose window starts at or after 0 (o s - pad >= 0), and the end of
 * those whose window ends inside (o s - pad + (k - 1) d < size), at least the first. */
static void dwm_inside(int32_t out, int32_t s, int32_t pad, int32_t span, int32_t size,
                       int32_t *lo, int32_t *hi)
{
    int32_t l = (pad + s - 1) / s;
    int32_t h = size - span + pad >= 0 ? (size - span + pad) / s + 1 : 0;
    l = TH_MIN(l, out);
    h = TH_MAX(TH_MIN(h, out), l);
    *lo = l;
    *hi = h;
}

int32_t th_nn_dw_mult_scratch(const th_dw_conv_params *params, const th_dims *filter_dims)
{
    const int32_t kp = (filter_dims->h * filter_dims->w + 1) / 2;
    return 4 * params->ch_mult * DWM_RW(kp);
}

void th_nn_dw_mult_s8(int8_t *scratch, const th_dw_conv_params *params,
                      const th_per_channel_quant *quant, const th_dims *input_dims,
                      const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                      const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    int32_t *records = (int32_t *)(void *)scratch;
    dwm_args a;
    a.in_h = input_dims->h, a.in_w = input_dims->w, a.in_c = input_dims->c;
    a.out_h = output_dims->h, a.out_w = output_dims->w, a.out_c = output_dims->c;
    a.kh = filter_dims->h, a.kw = filter_dims->w;
    a.sh = params->stride.h, a.sw = params->stride.w;
    a.dh = params->dilation.h, a.dw = params->dilation.w;
    a.pt = params->padding.h, a.pl = params->padding.w;
    a.mult = params->ch_mult;
    a.taps = a.kh * a.kw;
    a.kp = (a.taps + 1) / 2;
    a.rw = DWM_RW(a.kp);
    a.pad = -params->input_offset;
    a.zp = params->output_offset;
    a.lo = params->activation.min;
    a.hi = params->activation.max;
    a.rec = records;
    for (int32_t t = 0; t < 2 * DWM_KP_MAX; t++) {
        a.toff[t] = t < a.taps ? ((t / a.kw) * a.dh * a.in_w + (t % a.kw) * a.dw) * a.in_c : 0;
    }
    dwm_inside(a.out_h, a.sh, a.pt, (a.kh - 1) * a.dh + 1, a.in_h, &a.oy_lo, &a.oy_hi);
    dwm_inside(a.out_w, a.sw, a.pl, (a.kw - 1) * a.dw + 1, a.in_w, &a.ox_lo, &a.ox_hi);
    const int64_t in_batch = (int64_t)a.in_h * a.in_w * a.in_c;
    const int64_t out_batch = (int64_t)a.out_h * a.out_w * a.out_c;
    for (int32_t ic = 0; ic < a.in_c; ic++) {
        const int32_t mode = dwm_records(records, &a, ic, filter, bias, quant,
                                         params->input_offset);
        const dwm_fn fn = dwm_pick(a.kp, mode);
        for (int32_t n = 0; n < input_dims->n; n++) {
            a.in = input + n * in_batch + ic;
            a.out = output + n * out_batch + ic * a.mult;
            fn(&a);
        }
    }
}
#endif
