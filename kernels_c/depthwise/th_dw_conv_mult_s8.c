/* th_nn_dw_mult_s8: DEPTHWISE_CONV_2D with a channel multiplier > 1 and at most
 * TH_DW_MULT_TAPS filter taps (DSP builds; th_dw_conv_general_s8 picks it, path DW_MULT).
 *
 * Input channel by input channel, output pixel by output pixel: the taps of the pixel's
 * window are gathered once as int16 pairs from a copy of the channel's plane padded with
 * -input_offset (the offset is folded into each output channel's start value; every window
 * is then inside the copy), held in registers, and shared by the
 * ch_mult output channels of that input channel; each output channel is then one chain of
 * ceil(taps / 2) SMLADs over its weight pairs, which the kernel widens once per input channel
 * into scratch with the start value and the requantization constants (a record). With the
 * fast requantization (every channel of the input channel) the weights are doubled, which
 * saves its shift; otherwise the exact requantization, one output at a time. 3 x 3 filters
 * (dilation 1 along w) read one word per filter row, its SXTB16 halves pairs of taps; with
 * ch_mult 2 to 4 (fast requantization) their channels are unrolled (dwm_r3_m2..4), the
 * per-channel loop costing more than the channels where a pixel feeds so few. Filters of
 * at most 4 taps (any ch_mult >= 2) take the staged-row loop below
 * (dwm_small_s8): no plane copy, and each output channel's record held in registers over a
 * row of pixels; 1 x 1 filters with no padding stream straight over the input (dwm_1x1).
 * Two input channels, 3 x 3, ch_mult 2 (fast requantization) read their taps straight from
 * the interleaved input instead of the plane copy (dwm_i2_row). */
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
    const int8_t *in; /* the padded plane of one input channel (in_h x in_w bytes) */
    int8_t *out; /* output channel ic * ch_mult of one batch */
    const int32_t *rec; /* ch_mult records, rw words each */
    int32_t in_h, in_w, out_h, out_w, out_c;
    int32_t kh, kw, sh, sw, dh, dw;
    int32_t mult, kp, rw, taps;
    int32_t zp, lo, hi;
    int32_t in_c, pt, pl, pad; /* small filters: input channels, padding, -input_offset */
    int32_t toff[2 * DWM_KP_MAX]; /* tap offsets in the plane from the window's first tap */
    int8_t perm[2 * DWM_KP_MAX]; /* the tap of each pair half (row-major index; -1: none) */
    int32_t rows3; /* 3 x 3, dilation 1 along w: rows read as words */
} dwm_args;

/* Weight pairs (taps t, t + 1 at filter offsets o0, o1; o1 < 0: none) of the 4 output
 * channels whose filter bytes start at f into their records (r: the first one's pair,
 * records rw words apart): one word load per tap feeds all 4, the SXTB16 halves hold
 * channels (0, 2) and (1, 3). DBL: weights doubled (the fast requantization). The pairs'
 * sums are added to *se (channels 0, 2) and *sd (1, 3). */
TH_INLINE void dwm_pairs4(int32_t *r, int32_t rw, const int8_t *f, int32_t o0, int32_t o1,
                          int32_t *se, int32_t *sd, const int DBL)
{
    const int32_t u = th_read_s32(f + o0), v = o1 >= 0 ? th_read_s32(f + o1) : 0;
    int32_t e0 = th_sxtb16(u), e1 = th_sxtb16(v), d0 = th_sxtb16_ror8(u),
            d1 = th_sxtb16_ror8(v);
    if (DBL) {
        e0 = th_sadd16(e0, e0), e1 = th_sadd16(e1, e1);
        d0 = th_sadd16(d0, d0), d1 = th_sadd16(d1, d1);
    }
    *se = th_sadd16(*se, th_sadd16(e0, e1));
    *sd = th_sadd16(*sd, th_sadd16(d0, d1));
    r[0] = th_pkhbt(e0, e1);
    r[rw] = th_pkhbt(d0, d1);
    r[2 * rw] = th_pkhtb(e0, e1);
    r[3 * rw] = th_pkhtb(d0, d1);
}

/* The weight pairs of the m records at rec (channels oc0 ..), pair halves at the filter
 * offsets off (-1: none), and each record's (scaled) weight sum in its start word: four
 * channels at a time (sums at most 16 x 256, so halfword lanes hold them), then one by one. */
TH_INLINE void dwm_weights(int32_t *rec, const dwm_args *a, const int8_t *filter,
                           const int32_t *off, const int DBL)
{
    const int32_t m = a->mult, rw = a->rw, kp = a->kp;
    int32_t k = 0;
    for (; k + 4 <= m; k += 4, rec += 4 * rw, filter += 4) {
        int32_t se = 0, sd = 0;
        for (int32_t p = 0; p < kp; p++) {
            dwm_pairs4(rec + DWM_W + p, rw, filter, off[2 * p], off[2 * p + 1], &se, &sd, DBL);
        }
        rec[DWM_ACC] = th_smlad(se, 1, 0);
        rec[DWM_ACC + rw] = th_smlad(sd, 1, 0);
        rec[DWM_ACC + 2 * rw] = th_smlad(se, 1 << 16, 0);
        rec[DWM_ACC + 3 * rw] = th_smlad(sd, 1 << 16, 0);
    }
    for (; k < m; k++, rec += rw, filter++) {
        int32_t sum = 0, *w = rec + DWM_W;
        int32_t t = 0;
        for (; t + 1 < a->taps; t += 2) {
            const int32_t v0 = filter[off[t]], v1 = filter[off[t + 1]];
            sum += v0 + v1;
            *w++ = DBL ? th_pkhbt(2 * v0, 2 * v1) : th_pkhbt(v0, v1);
        }
        if (t < a->taps) {
            const int32_t v0 = filter[off[t]];
            sum += v0;
            *w = th_pkhbt(DBL ? 2 * v0 : v0, 0);
        }
        rec[DWM_ACC] = DBL ? 2 * sum : sum;
    }
}

/* Widens the ch_mult records of input channel ic; returns the mode of all of them: 0 fast
 * requantization, 1 fast with the activation clamp, 2 exact. */
static int32_t __attribute__((noinline))
dwm_records(int32_t *rec, const dwm_args *a, int32_t ic, const int8_t *filter,
            const int32_t *bias, const th_per_channel_quant *quant, int32_t input_offset)
{
    const int32_t m = a->mult, oc0 = ic * m, kp = a->kp;
    const int32_t *const mult = quant->multiplier + oc0, *const shift = quant->shift + oc0;
    const int32_t *const b = bias != NULL ? bias + oc0 : NULL;
    /* th_fast_rq_ok(multiplier, shift, taps * 256 * 128 + |bias|) for every channel. */
    const int32_t lim = (1 << 29) - 1 - a->taps * 256 * 128; /* |bias| <= lim */
    int32_t fast = 1;
    for (int32_t k = 0; k < m; k++) {
        const int32_t bk = b != NULL ? b[k] : 0;
        fast &= (mult[k] >= 0) & th_fast_shift_ok(shift[k]) &
                ((uint32_t)bk + (uint32_t)lim <= 2u * (uint32_t)lim);
    }
    const int32_t clamp = a->lo > -128 || a->hi < 127;
    const int32_t mode = fast ? clamp : 2;
    /* Each pair half's filter offset (perm is a tap for the first taps halves, -1 after). */
    int32_t off[2 * DWM_KP_MAX];
    for (int32_t t = 0; t < 2 * kp; t++) {
        off[t] = t < a->taps ? a->perm[t] * a->out_c : -1;
    }
    if (mode == 2) {
        dwm_weights(rec, a, filter + oc0, off, 0);
    } else {
        dwm_weights(rec, a, filter + oc0, off, 1);
    }
    /* Start value (bias + input_offset * weight sum, scaled like the weights) and the
     * requantization constants (th_fast_rq_make: round_zp = (2 zp + 1) << (e - 1)). */
    const uint32_t scale = mode == 2 ? 1u : 2u, zp1 = 2u * (uint32_t)a->zp + 1u;
    for (int32_t k = 0; k < m; k++, rec += a->rw) {
        const int32_t bk = b != NULL ? b[k] : 0;
        rec[DWM_ACC] = (int32_t)((uint32_t)bk * scale +
                                 (uint32_t)input_offset * (uint32_t)rec[DWM_ACC]);
        rec[DWM_MULT(kp)] = mult[k];
        if (mode == 2) {
            rec[DWM_RZP(kp)] = shift[k];
            rec[DWM_E(kp)] = 0;
        } else {
            rec[DWM_RZP(kp)] = (int32_t)(zp1 << (-shift[k] - 1));
            rec[DWM_E(kp)] = -shift[k];
        }
    }
    return mode;
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
 * loads its record with two LDMs (r4 the accumulator, r5-r9 weights and constants); the end
 * pointer is read from the stack (GCC does not find registers for it on every core). */
#define DWM_LOOP_HEAD "1:\n\tldmia %[rec]!, {r4, r5, r6, r8, r9}\n\t"
#define DWM_LOOP_TAIL(y)                                                                     \
    "ssat " y ", #8, " y "\n\tstrb " y ", [%[out]], #1\n\tldr r4, %[end]\n\t"                \
    "cmp %[out], r4\n\tbne 1b\n"
#define DWM_ASM(body, ...)                                                                   \
    __asm__ volatile(DWM_LOOP_HEAD body                                                      \
                     : [rec] "+r"(rec), [out] "+r"(out)                                      \
                     : [end] "m"(end), __VA_ARGS__                                           \
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
    } else { /* acc w0 w1; w2 w3 w4 mult; rzp e: four registers (r4-r6, r8). Two outputs
              * per end check (an odd count does one first): 15.5 instructions an output
              * instead of 17. */
#define DWM_OUT5                                                                             \
    "ldmia %[rec]!, {r4, r5, r6}\n\tsmlad r4, %[x0], r5, r4\n\t"                             \
    "smlad r4, %[x1], r6, r4\n\tldmia %[rec]!, {r5, r6, r8}\n\t"                             \
    "smlad r4, %[x2], r5, r4\n\tsmlad r4, %[x3], r6, r4\n\t"                                 \
    "smlad r4, %[x4], r8, r4\n\tldmia %[rec]!, {r5, r6, r8}\n\t"                             \
    "smmlar r5, r4, r5, r6\n\tadd r5, r5, r4, asr #31\n\tasr r5, r5, r8\n\t"                 \
    "ssat r5, #8, r5\n\tstrb r5, [%[out]], #1\n\t"
#define DWM_X5 [x0] "r"(xp[0]), [x1] "r"(xp[1]), [x2] "r"(xp[2]), [x3] "r"(xp[3]), [x4] "r"(xp[4])
        if (m & 1) {
            __asm__ volatile(DWM_OUT5
                             : [rec] "+r"(rec), [out] "+r"(out)
                             : DWM_X5
                             : "r4", "r5", "r6", "r8", "memory");
        }
        if (out != end) {
            __asm__ volatile("1:\n\t" DWM_OUT5 DWM_OUT5 "ldr r4, %[end]\n\t"
                             "cmp %[out], r4\n\tbne 1b\n"
                             : [rec] "+r"(rec), [out] "+r"(out)
                             : [end] "m"(end), DWM_X5
                             : "r4", "r5", "r6", "r8", "cc", "memory");
        }
#undef DWM_X5
#undef DWM_OUT5
    }
}
#undef DWM_ASM
#undef DWM_LOOP_TAIL
#undef DWM_LOOP_HEAD

/* One output of record mode 0, KP 5, from the record at *rec (advanced past it): three LDMs,
 * five SMLADs, the fast requantization; saturated to int8 (the caller stores it). The LDMs
 * name fixed registers (a register list must ascend). */
TH_INLINE int32_t dwm_out5_asm(const int32_t **rec, const int32_t *xp)
{
    const int32_t *r = *rec;
    int32_t y;
    __asm__("ldmia %[r]!, {r4, r5, r6}\n\t"
            "smlad r4, %[x0], r5, r4\n\tsmlad r4, %[x1], r6, r4\n\t"
            "ldmia %[r]!, {r5, r6, r8}\n\t"
            "smlad r4, %[x2], r5, r4\n\tsmlad r4, %[x3], r6, r4\n\t"
            "smlad r4, %[x4], r8, r4\n\tldmia %[r]!, {r5, r6, r8}\n\t"
            "smmlar %[y], r4, r5, r6\n\tadd %[y], %[y], r4, asr #31\n\t"
            "asr %[y], %[y], r8\n\tssat %[y], #8, %[y]"
            : [y] "=&r"(y), [r] "+r"(r)
            : [x0] "r"(xp[0]), [x1] "r"(xp[1]), [x2] "r"(xp[2]), [x3] "r"(xp[3]),
              [x4] "r"(xp[4]), "m"(*(const int32_t(*)[DWM_RW(5)])r)
            : "r4", "r5", "r6", "r8");
    *rec = r;
    return y;
}
#endif

/* Every output pixel of one input channel (its padded plane at a->in): KP weight pairs,
 * MODE 0 / 1 (fast, clamp) or 2. */
/* R3: the rows3 order (KP 5); MM: 2 to 4 the ch_mult of record mode 0 with R3 (unrolled
 * channels), else 0. */
TH_INLINE void dwm_plane(const dwm_args *a, const int KP, const int MODE, const int R3,
                         const int MM)
{
    /* The fields the pixel loop reads, held in locals: the assembly's memory clobber would
     * reload them from *a at every pixel. */
    (void)MM; /* native builds only */
    const int32_t rw = DWM_RW(KP);
    const int32_t lo = a->lo, hi = a->hi;
    const int32_t pw = a->in_w, sw = a->sw, oc = a->out_c, m = a->mult, out_h = a->out_h;
    const int32_t rs = a->dh * pw, row_step = a->sh * pw, out_row = a->out_w * oc;
    const int32_t span = a->out_w * sw;
    const int32_t *const rec0 = a->rec;
    const int8_t *row = a->in;
    int8_t *out_r = a->out;
    for (int32_t oy = 0; oy < out_h; oy++, row += row_step, out_r += out_row) {
        int8_t *out = out_r;
        const int8_t *const end = row + span;
        for (const int8_t *base = row; base != end; out += oc, base += sw) {
            int32_t xp[DWM_KP_MAX];
            if (KP == 5 && R3) {
                /* One word per row: (c0, c2) and (c1, -) by SXTB16 (the rows3 order). */
                const int32_t w0 = th_read_s32(base);
                const int32_t w1 = th_read_s32(base + rs);
                const int32_t w2 = th_read_s32(base + 2 * rs);
                xp[0] = th_sxtb16(w0);
                xp[1] = th_sxtb16(w1);
                xp[2] = th_sxtb16(w2);
                xp[3] = th_pkhbt(th_sxtb16_ror8(w0), th_sxtb16_ror8(w1));
                xp[4 % KP] = th_sxtb16_ror8(w2);
            } else {
                _Pragma("GCC unroll 8") for (int32_t p = 0; p < KP; p++) {
                    xp[p] = th_pkhbt(base[a->toff[2 * p]], base[a->toff[2 * p + 1]]);
                }
            }
            if (MODE == 2) {
                dwm_exact(xp, a, out);
                continue;
            }
#if TH_NN_DSP_NATIVE
            if (MODE == 0 && KP == 5 && MM >= 2) { /* few channels: unrolled, no loop */
                const int32_t *rec = rec0;
                _Pragma("GCC unroll 4") for (int32_t k = 0; k < MM; k++) {
                    out[k] = (int8_t)dwm_out5_asm(&rec, xp);
                }
                continue;
            }
            if (MODE == 0 && KP <= 5) {
                dwm_pixel_asm(xp, rec0, out, m, KP);
                continue;
            }
#endif
            const int32_t *rec = rec0;
            int8_t *o = out;
            for (int32_t k = m; k > 0; k--, rec += rw) {
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
        dwm_plane(a, KP, 0, 0, 0);                                                           \
    }                                                                                        \
    static void dwm_k##KP##_clamp(const dwm_args *a)                                         \
    {                                                                                        \
        dwm_plane(a, KP, 1, 0, 0);                                                           \
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

/* 3 x 3 (rows3 order): any ch_mult, and ch_mult 2 to 4 of record mode 0 unrolled. */
#define DWM_R3(NAME, MODE, MM)                                                               \
    static void NAME(const dwm_args *a)                                                      \
    {                                                                                        \
        dwm_plane(a, 5, MODE, 1, MM);                                                        \
    }
DWM_R3(dwm_r3_fast, 0, 0)
DWM_R3(dwm_r3_clamp, 1, 0)
#if TH_NN_DSP_NATIVE
DWM_R3(dwm_r3_m2, 0, 2)
DWM_R3(dwm_r3_m3, 0, 3)
DWM_R3(dwm_r3_m4, 0, 4)
#endif
#undef DWM_R3

static void dwm_any_exact(const dwm_args *a)
{
    dwm_plane(a, DWM_KP_MAX, 2, 0, 0);
}

static dwm_fn dwm_pick(const dwm_args *a, int32_t mode)
{
    static const dwm_fn fns[DWM_KP_MAX][2] = {
        {dwm_k1_fast, dwm_k1_clamp}, {dwm_k2_fast, dwm_k2_clamp}, {dwm_k3_fast, dwm_k3_clamp},
        {dwm_k4_fast, dwm_k4_clamp}, {dwm_k5_fast, dwm_k5_clamp}, {dwm_k6_fast, dwm_k6_clamp},
        {dwm_k7_fast, dwm_k7_clamp}, {dwm_k8_fast, dwm_k8_clamp},
    };
    if (mode == 2) {
        return dwm_any_exact;
    }
    if (a->kp == 5 && a->rows3) {
#if TH_NN_DSP_NATIVE
        static const dwm_fn few[3] = {dwm_r3_m2, dwm_r3_m3, dwm_r3_m4};
        if (mode == 0 && a->mult <= 4) {
            return few[a->mult - 2];
        }
#endif
        return mode == 0 ? dwm_r3_fast : dwm_r3_clamp;
    }
    return fns[a->kp - 1][mode];
}

/* The fields both loops take from the parameters and shapes. */
static dwm_args dwm_args_make(const th_dw_conv_params *params, const th_dims *filter_dims,
                              const th_dims *output_dims)
{
    dwm_args a;
    a.out_h = output_dims->h, a.out_w = output_dims->w, a.out_c = output_dims->c;
    a.kh = filter_dims->h, a.kw = filter_dims->w;
    a.sh = params->stride.h, a.sw = params->stride.w;
    a.dh = params->dilation.h, a.dw = params->dilation.w;
    a.mult = params->ch_mult;
    a.taps = a.kh * a.kw;
    a.kp = (a.taps + 1) / 2;
    a.rw = DWM_RW(a.kp);
    a.zp = params->output_offset;
    a.lo = params->activation.min;
    a.hi = params->activation.max;
    return a;
}

/* ---- Filters of at most 4 taps (TH_DW_MULT_SMALL_TAPS): one or two tap pairs per output.
 * Per input channel and output row, each output pixel's tap pairs are staged once as int16
 * pairs (KP words, -input_offset outside the input); then per output channel the record's
 * start value, weight pairs and requantization constants are held in registers while the
 * row's pixels stream past two at a time (one LDM feeds two outputs). */

#if TH_NN_DSP_NATIVE
/* Record mode 0, KP 1 / 2: for each of the m records at rec (channels k = 0 .. m - 1), the
 * outputs of the pixel pairs staged at [x, x_end) (x_end > x), written at out + k, + oc,
 * + 2 oc, ... Whole functions in assembly: the pair loop needs 14 registers, more than GCC
 * leaves an asm statement. Frame: x, the channel's out, the records' end, the next record. */
#define DWM_STREAM_HEAD(rw_mul)                                                              \
    "push {r4-r11, lr}\n\tsub sp, #16\n\tldr lr, [sp, #52]\n\tldr r4, [sp, #56]\n\t" rw_mul \
    "str r0, [sp]\n\tstr r2, [sp, #4]\n\tstr r4, [sp, #8]\n"                                 \
    "2:\n\t"
#define DWM_STREAM_TAIL(e, ya, yb)                                                           \
    "asr " ya ", " ya ", " e "\n\tasr " yb ", " yb ", " e "\n\tssat " ya ", #8, " ya "\n\t"      \
    "ssat " yb ", #8, " yb "\n\tstrb " ya ", [r2]\n\tstrb " yb ", [r2, lr]\n\t"                  \
    "add r2, r2, lr, lsl #1\n\tcmp r0, r1\n\tbne 1b\n\t"                                     \
    "ldr r2, [sp, #4]\n\tadds r2, #1\n\tstr r2, [sp, #4]\n\tldr r3, [sp, #12]\n\t"           \
    "ldr r4, [sp, #8]\n\tcmp r3, r4\n\tbne 2b\n\tadd sp, #16\n\tpop {r4-r11, pc}\n"

/* The KP 1 pair loop; pre: before it, load: the two pixels' tap pairs into r8, r9 (r0 advanced). */
#define DWM_STREAM_KP1(pre, load)                                                            \
    DWM_STREAM_HEAD("add r4, r4, r4, lsl #2\n\tadd r4, r3, r4, lsl #2\n\t")                  \
    "add r4, r3, #20\n\tstr r4, [sp, #12]\n\t"                                               \
    "ldm r3, {r3-r7}\n\t" /* acc w0 mult rzp e */                                            \
    "ldr r0, [sp]\n\t" pre /* r2: the channel's out */                                       \
    "1:\n\t" load "smlad r8, r8, r4, r3\n\t"                                                 \
    "smlad r9, r9, r4, r3\n\t"                                                               \
    "smmlar r10, r8, r5, r6\n\t"                                                             \
    "add r10, r10, r8, asr #31\n\t"                                                          \
    "smmlar r11, r9, r5, r6\n\t"                                                             \
    "add r11, r11, r9, asr #31\n\t" DWM_STREAM_TAIL("r7", "r10", "r11")

__attribute__((naked, noinline)) static void
dwm_stream_kp1(const int32_t *x __attribute__((unused)),
               const int32_t *x_end __attribute__((unused)),
               int8_t *out __attribute__((unused)), const int32_t *rec __attribute__((unused)),
               int32_t oc __attribute__((unused)), int32_t m __attribute__((unused)))
{
    __asm__ volatile(DWM_STREAM_KP1("", "ldm r0!, {r8, r9}\n\t")); /* pixel a, pixel b */
}

/* 1 x 1 filters: the same loop on the input itself (x: the channel's first pixel, x_end
 * after an even count, step bytes apart): each tap is a sign-extended byte, whose high half
 * meets the record's zero weight half. */
__attribute__((naked, noinline)) static void
dwm_stream_1x1(const int8_t *x __attribute__((unused)),
               const int8_t *x_end __attribute__((unused)),
               int8_t *out __attribute__((unused)), const int32_t *rec __attribute__((unused)),
               int32_t oc __attribute__((unused)), int32_t m __attribute__((unused)),
               int32_t step __attribute__((unused)))
{
    __asm__ volatile(DWM_STREAM_KP1("ldr r12, [sp, #60]\n\t",
                                    "ldrsb r8, [r0]\n\tldrsb r9, [r0, r12]\n\t"
                                    "add r0, r0, r12, lsl #1\n\t"));
}
#undef DWM_STREAM_KP1

__attribute__((naked, noinline)) static void
dwm_stream_kp2(const int32_t *x __attribute__((unused)),
               const int32_t *x_end __attribute__((unused)),
               int8_t *out __attribute__((unused)), const int32_t *rec __attribute__((unused)),
               int32_t oc __attribute__((unused)), int32_t m __attribute__((unused)))
{
    __asm__ volatile(DWM_STREAM_HEAD("add r4, r4, r4, lsl #1\n\tadd r4, r3, r4, lsl #3\n\t")
                     "add r4, r3, #24\n\tstr r4, [sp, #12]\n\t"
                     "ldm r3, {r3-r8}\n\t" /* acc w0 w1 mult rzp e */
                     "ldr r0, [sp]\n" /* r2: the channel's out */
                     "1:\n\t"
                     "ldm r0!, {r9-r12}\n\t" /* pixel a: x0 x1, pixel b: x0 x1 */
                     "smlad r9, r9, r4, r3\n\t"
                     "smlad r9, r10, r5, r9\n\t"
                     "smlad r11, r11, r4, r3\n\t"
                     "smlad r11, r12, r5, r11\n\t"
                     "smmlar r10, r9, r6, r7\n\t"
                     "add r10, r10, r9, asr #31\n\t"
                     "smmlar r12, r11, r6, r7\n\t"
                     "add r12, r12, r11, asr #31\n\t" DWM_STREAM_TAIL("r8", "r10", "r12"));
}
#undef DWM_STREAM_HEAD
#undef DWM_STREAM_TAIL
#endif

/* One output of one channel from its staged tap pairs x (any record mode). */
TH_INLINE int32_t dwm_small_out(const int32_t *x, const int32_t *rec, const dwm_args *a,
                                int32_t mode)
{
    const int32_t kp = a->kp;
    int32_t acc = rec[DWM_ACC];
    for (int32_t p = 0; p < kp; p++) {
        acc = th_smlad(x[p], rec[DWM_W + p], acc);
    }
    if (mode == 2) {
        return th_clamp(th_requantize_s8(acc, rec[DWM_MULT(kp)], rec[DWM_RZP(kp)], a->zp), a->lo,
                        a->hi);
    }
    int32_t y = th_smmlar(acc, rec[DWM_MULT(kp)], rec[DWM_RZP(kp)]);
    y += acc >> 31;
    y = th_ssat8(y >> rec[DWM_E(kp)]);
    return mode == 1 ? th_clamp(y, a->lo, a->hi) : y;
}

/* Stages the tap pairs of output row oy of one input channel (in: its first value in the
 * batch) into x: pixels whose window is inside the input read it directly, the others
 * check each tap. */
static void dwm_small_stage(int32_t *x, const int8_t *in, const dwm_args *a, int32_t oy,
                            int32_t row_in, int32_t ox_lo, int32_t ox_hi, const int32_t *ty,
                            const int32_t *tx)
{
    const int32_t kp = a->kp, taps = a->taps;
    const int32_t iy = oy * a->sh - a->pt;
    const int32_t lo = row_in ? ox_lo : a->out_w, hi = row_in ? ox_hi : a->out_w;
    for (int32_t ox = 0; ox < a->out_w; ox++) {
        if (ox == lo && lo < hi) { /* the inner run */
            const int8_t *base =
                in + ((int64_t)iy * a->in_w + (ox * a->sw - a->pl)) * a->in_c;
            const int32_t step = a->sw * a->in_c;
            const int32_t o0 = a->toff[0], o1 = a->toff[1], o2 = a->toff[2], o3 = a->toff[3];
            int32_t *d = x + ox * kp;
            if (kp == 1) {
                if (taps == 2) {
                    for (; ox < hi; ox++, base += step) {
                        *d++ = th_pkhbt(base[o0], base[o1]);
                    }
                } else {
                    for (; ox < hi; ox++, base += step) {
                        *d++ = th_pkhbt(base[o0], 0);
                    }
                }
            } else if (taps == 4) {
                for (; ox < hi; ox++, base += step) {
                    const int32_t v0 = base[o0], v1 = base[o1], v2 = base[o2], v3 = base[o3];
#if TH_NN_DSP_NATIVE /* one STRD with writeback (GCC emits two indexed stores) */
                    __asm__ volatile("strd %[p0], %[p1], [%[d]], #8"
                                     : [d] "+r"(d)
                                     : [p0] "r"(th_pkhbt(v0, v1)), [p1] "r"(th_pkhbt(v2, v3))
                                     : "memory");
#else
                    d[0] = th_pkhbt(v0, v1);
                    d[1] = th_pkhbt(v2, v3);
                    d += 2;
#endif
                }
            } else {
                for (; ox < hi; ox++, base += step, d += 2) {
                    d[0] = th_pkhbt(base[o0], base[o1]);
                    d[1] = th_pkhbt(base[o2], 0);
                }
            }
            if (ox >= a->out_w) {
                break;
            }
        }
        const int32_t ix = ox * a->sw - a->pl;
        int32_t v[4];
        for (int32_t t = 0; t < 4; t++) {
            const int32_t y = iy + ty[t], xx = ix + tx[t];
            v[t] = t >= taps ? 0
                   : (uint32_t)y < (uint32_t)a->in_h && (uint32_t)xx < (uint32_t)a->in_w
                       ? in[(y * a->in_w + xx) * a->in_c]
                       : a->pad;
        }
        x[ox * kp] = th_pkhbt(v[0], v[1]);
        if (kp == 2) {
            x[ox * kp + 1] = th_pkhbt(v[2], v[3]);
        }
    }
    if (a->out_w % 2 != 0) { /* the pair loop's extra pixel (its outputs are overwritten) */
        x[a->out_w * kp] = 0;
        x[a->out_w * kp + kp - 1] = 0;
    }
}

/* [lo, hi): the outputs along one axis whose windows (input o s - pad .. + span - 1) are
 * inside [0, n). */
static void dwm_inner(int32_t out, int32_t s, int32_t pad, int32_t span, int32_t n,
                      int32_t *lo, int32_t *hi)
{
    *lo = out, *hi = out;
    for (int32_t o = 0; o < out; o++) {
        const int32_t i = o * s - pad;
        if (i >= 0 && i + span <= n) {
            *lo = TH_MIN(*lo, o);
            *hi = o + 1;
        }
    }
    if (*hi < *lo) {
        *hi = *lo;
    }
}

/* 1 x 1 filters with every pixel inside the input (one input channel of one batch; in: its
 * first value, out: its first output channel's): no staging, each output channel streams
 * straight over the input, a row at a time, or the whole plane where rows are contiguous. */
static void dwm_1x1(const dwm_args *a, const int8_t *in, int8_t *out, const int32_t *records,
                    int32_t mode)
{
    const int32_t step = a->sw * a->in_c;
    int32_t rows = a->out_h, len = a->out_w;
    const int64_t in_row = (int64_t)a->sh * a->in_w * a->in_c;
    const int64_t out_row = (int64_t)a->out_w * a->out_c;
    if (a->sh == 1 && a->sw == 1 && a->in_w == a->out_w) {
        len *= rows, rows = 1;
    }
    for (int32_t r = 0; r < rows; r++, in += in_row, out += out_row) {
        int32_t done = 0; /* pixels the pair loop wrote */
#if TH_NN_DSP_NATIVE
        if (mode == 0 && len >= 2) {
            dwm_stream_1x1(in, in + (int64_t)(len / 2) * 2 * step, out, records, a->out_c,
                           a->mult, step);
            done = len & ~1;
        }
#endif
        const int32_t *rec = records;
        for (int32_t k = 0; k < a->mult && done < len; k++, rec += a->rw) {
            for (int32_t ox = done; ox < len; ox++) {
                const int32_t x = th_pkhbt(in[(int64_t)ox * step], 0);
                out[(int64_t)ox * a->out_c + k] = (int8_t)dwm_small_out(&x, rec, a, mode);
            }
        }
    }
}

static void __attribute__((noinline)) dwm_small_s8(int8_t *scratch, const th_dw_conv_params *params,
                         const th_per_channel_quant *quant, const th_dims *input_dims,
                         const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                         const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    dwm_args a = dwm_args_make(params, filter_dims, output_dims);
    a.in_h = input_dims->h, a.in_w = input_dims->w;
    a.in_c = input_dims->c;
    a.pt = params->padding.h, a.pl = params->padding.w;
    a.pad = -params->input_offset;
    a.rows3 = 0;
    int32_t ty[4], tx[4]; /* each tap's row and column in the window */
    for (int32_t t = 0; t < 2 * DWM_KP_MAX; t++) {
        a.perm[t] = (int8_t)(t < a.taps ? t : -1);
        const int32_t tap = t < a.taps ? t : 0;
        if (t < 4) {
            ty[t] = (tap / a.kw) * a.dh;
            tx[t] = (tap % a.kw) * a.dw;
            a.toff[t] = (ty[t] * a.in_w + tx[t]) * a.in_c;
        }
    }
    int32_t oy_lo, oy_hi, ox_lo, ox_hi;
    dwm_inner(a.out_h, a.sh, a.pt, (a.kh - 1) * a.dh + 1, a.in_h, &oy_lo, &oy_hi);
    dwm_inner(a.out_w, a.sw, a.pl, (a.kw - 1) * a.dw + 1, a.in_w, &ox_lo, &ox_hi);
    int32_t *records = (int32_t *)(void *)scratch;
    int32_t *x = records + a.mult * a.rw;
    const int64_t in_batch = (int64_t)a.in_h * a.in_w * a.in_c;
    const int64_t out_batch = (int64_t)a.out_h * a.out_w * a.out_c;
    for (int32_t ic = 0; ic < a.in_c; ic++) {
        const int32_t mode = dwm_records(records, &a, ic, filter, bias, quant,
                                         params->input_offset);
        for (int32_t n = 0; n < input_dims->n; n++) {
            const int8_t *in = input + n * in_batch + ic;
            if (a.taps == 1 && oy_lo == 0 && oy_hi == a.out_h && ox_lo == 0 &&
                ox_hi == a.out_w) {
                dwm_1x1(&a, in, output + n * out_batch + ic * a.mult, records, mode);
                continue;
            }
            for (int32_t oy = 0; oy < a.out_h; oy++) {
                dwm_small_stage(x, in, &a, oy, oy >= oy_lo && oy < oy_hi, ox_lo, ox_hi, ty,
                                tx);
                int8_t *out = output + n * out_batch + (int64_t)oy * a.out_w * a.out_c +
                              ic * a.mult;
                int32_t ox0 = 0; /* outputs the pair loop wrote */
#if TH_NN_DSP_NATIVE
                /* An odd last pixel goes with the pair loop when its extra output (the next
                 * row's first pixel of the channel, written later) is inside the output. */
                const int32_t pairs = oy + 1 < a.out_h ? (a.out_w + 1) / 2 : a.out_w / 2;
                if (mode == 0 && pairs > 0) {
                    if (a.kp == 1) {
                        dwm_stream_kp1(x, x + 2 * pairs, out, records, a.out_c, a.mult);
                    } else {
                        dwm_stream_kp2(x, x + 4 * pairs, out, records, a.out_c, a.mult);
                    }
                    ox0 = TH_MIN(2 * pairs, a.out_w);
                }
#endif
                const int32_t *rec = records;
                for (int32_t k = 0; k < a.mult && ox0 < a.out_w; k++, rec += a.rw, out++) {
                    for (int32_t ox = ox0; ox < a.out_w; ox++) {
                        out[(int64_t)ox * a.out_c] =
                            (int8_t)dwm_small_out(x + ox * a.kp, rec, &a, mode);
                    }
                }
            }
        }
    }
}

/* The padded plane: the rows and columns the windows of the outputs read, plus 4 bytes
 * (a row's word read may pass its end). */
static int32_t dwm_plane_h(const th_dw_conv_params *params, const th_dims *filter_dims,
                           const th_dims *output_dims)
{
    return (output_dims->h - 1) * params->stride.h + (filter_dims->h - 1) * params->dilation.h +
           1;
}

static int32_t dwm_plane_w(const th_dw_conv_params *params, const th_dims *filter_dims,
                           const th_dims *output_dims)
{
    return (output_dims->w - 1) * params->stride.w + (filter_dims->w - 1) * params->dilation.w +
           1;
}

static int32_t dwm_records_bytes(const th_dw_conv_params *params, const th_dims *filter_dims)
{
    const int32_t kp = (filter_dims->h * filter_dims->w + 1) / 2;
    return 4 * params->ch_mult * DWM_RW(kp);
}

/* Filters of at most 4 taps: one output row's staged tap pairs (DWM_SMALL_KP words a pixel,
 * the pixel count rounded up to even), after the records. */
static int32_t dwm_small_bytes(const th_dims *filter_dims, const th_dims *output_dims)
{
    const int32_t kp = (filter_dims->h * filter_dims->w + 1) / 2;
    return 4 * kp * ((output_dims->w + 1) & ~1);
}

int32_t th_nn_dw_mult_scratch(const th_dw_conv_params *params, const th_dims *filter_dims,
                              const th_dims *output_dims)
{
    if (filter_dims->h * filter_dims->w <= TH_DW_MULT_SMALL_TAPS) {
        return dwm_records_bytes(params, filter_dims) + dwm_small_bytes(filter_dims, output_dims);
    }
    return dwm_records_bytes(params, filter_dims) +
           th_round_up4(dwm_plane_h(params, filter_dims, output_dims) *
                            dwm_plane_w(params, filter_dims, output_dims) +
                        4);
}

/* Bytes 0, 2, 4, 6 at q (unaligned) packed into one word. */
TH_INLINE int32_t dwm_even_bytes(const int8_t *q)
{
    const uint32_t u = (uint32_t)th_read_s32(q) & 0x00FF00FFu;
    const uint32_t v = (uint32_t)th_read_s32(q + 4) & 0x00FF00FFu;
    return th_pkhbt((int32_t)(u | u >> 8), (int32_t)(v | v >> 8));
}

/* d[0 .. n) = q[0], q[c], q[2 c], ...: four values per step, packed into one word store
 * (d and q need not be aligned). C 1 (one channel) copies words; C 2 takes bytes 0 and 2 of
 * two word loads (a group needs q[7] inside the input: a pixel follows it); C 0, any c. */
TH_INLINE void dwm_copy_row(int8_t *d, const int8_t *q, int32_t n, int32_t c, const int C)
{
    if (C == 1) {
        for (; n >= 4; n -= 4, q += 4, d += 4) {
            th_write_s32(d, th_read_s32(q));
        }
    } else if (C == 2) {
        for (; n > 8; n -= 8, q += 16, d += 8) {
            th_write_s32(d, dwm_even_bytes(q));
            th_write_s32(d + 4, dwm_even_bytes(q + 8));
        }
        if (n > 4) {
            th_write_s32(d, dwm_even_bytes(q));
            n -= 4, q += 8, d += 4;
        }
    } else {
        const int32_t c2 = 2 * c, c3 = 3 * c, c4 = 4 * c;
        for (; n >= 4; n -= 4, q += c4, d += 4) {
            const uint32_t v = (uint32_t)(uint8_t)q[0] | (uint32_t)(uint8_t)q[c] << 8 |
                               (uint32_t)(uint8_t)q[c2] << 16 | (uint32_t)(uint8_t)q[c3] << 24;
            th_write_s32(d, (int32_t)v);
        }
    }
    for (; n > 0; n--, q += c) {
        *d++ = *q;
    }
}

/* rows rows of n values of one channel (c channels) from q (rows q_row apart) into the plane
 * at d (rows d_row apart); the channel count picked once. */
static void dwm_copy_channel(int8_t *d, const int8_t *q, int32_t rows, int32_t n, int32_t c,
                             int32_t d_row, int64_t q_row)
{
    if (c == 1) {
        for (; rows > 0; rows--, d += d_row, q += q_row) {
            dwm_copy_row(d, q, n, 1, 1);
        }
    } else if (c == 2) {
        for (; rows > 0; rows--, d += d_row, q += q_row) {
            dwm_copy_row(d, q, n, 2, 2);
        }
    } else {
        for (; rows > 0; rows--, d += d_row, q += q_row) {
            dwm_copy_row(d, q, n, c, 0);
        }
    }
}

/* ---- Two input channels, 3 x 3, dilation 1 along w, record mode 0: no plane copy (the
 * copy cost 5.4 instructions an output of ch_mult 2, more than the outputs' staging). The
 * taps are read straight from the interleaved input: at a channel's value of pixel x, one
 * word holds (x, x + 1) of the channel in bytes 0 and 2 (SXTB16: a row's taps c0, c1) and
 * byte 4 is x + 2 (LDRSB): pairs (r c0, r c1) for each row r, then (r0 c2, r1 c2), (r2 c2,
 * -), as dwm_i2_perm. Rows outside the input read a row of -input_offset; the windows that
 * cross a column border are gathered into an 8-byte-per-row copy first. */
static const int8_t dwm_i2_perm[10] = {0, 1, 3, 4, 6, 7, 2, 5, 8, -1};

/* The 2 outputs (ch_mult 2) of one pixel whose window rows start at q, q + d1, q + d2
 * (channel values 2 bytes apart; rows of the input or of the pad row, hence offsets):
 * the portable form of dwm_i2_row's loop body. */
TH_INLINE void dwm_i2_px(const int8_t *q, uintptr_t d1, uintptr_t d2, const int32_t *rec,
                         int8_t *out)
{
    const int8_t *const q1 = (const int8_t *)((uintptr_t)q + d1);
    const int8_t *const q2 = (const int8_t *)((uintptr_t)q + d2);
    int32_t xp[5];
    xp[0] = th_sxtb16(th_read_s32(q));
    xp[1] = th_sxtb16(th_read_s32(q1));
    xp[2] = th_sxtb16(th_read_s32(q2));
    xp[3] = th_pkhbt(q[4], q1[4]);
    xp[4] = q2[4]; /* its high half meets the record's zero weight half */
    for (int32_t k = 0; k < 2; k++, rec += DWM_RW(5)) {
        int32_t acc = rec[DWM_ACC];
        for (int32_t p = 0; p < 5; p++) {
            acc = th_smlad(xp[p], rec[DWM_W + p], acc);
        }
        const int32_t y = th_smmlar(acc, rec[DWM_MULT(5)], rec[DWM_RZP(5)]) + (acc >> 31);
        out[k] = (int8_t)th_ssat8(y >> rec[DWM_E(5)]);
    }
}

#if TH_NN_DSP_NATIVE
/* The pixels of one row: window rows at q, q + d1, q + d2, step bytes from pixel to pixel;
 * outputs [out, end), 4 apart (out_c = 2 x 2). A whole function in assembly: 14 registers
 * (q d1 d2 out, the 5 tap pairs, the record walk and 4 for the output) leave GCC none for
 * its loop (55 instructions a pixel; 44 here: 12 staging, 2 x 13 outputs, 6 loop). Frame:
 * rec, end, step. */
__attribute__((naked, noinline)) static void
dwm_i2_row(const int8_t *q __attribute__((unused)), uintptr_t d1 __attribute__((unused)),
           uintptr_t d2 __attribute__((unused)), int8_t *out __attribute__((unused)),
           const int32_t *rec __attribute__((unused)), const int8_t *end __attribute__((unused)),
           int32_t step __attribute__((unused)))
{
#define DWM_I2_OUT                                                                           \
    "ldmia r12!, {r4, r5, r6}\n\tsmlad r4, r7, r5, r4\n\tsmlad r4, r9, r6, r4\n\t"           \
    "ldmia r12!, {r5, r6, r8}\n\tsmlad r4, r10, r5, r4\n\tsmlad r4, r11, r6, r4\n\t"         \
    "smlad r4, lr, r8, r4\n\tldmia r12!, {r5, r6, r8}\n\tsmmlar r5, r4, r5, r6\n\t"          \
    "add r5, r5, r4, asr #31\n\tasr r5, r5, r8\n\tssat r5, #8, r5\n\t"
    __asm__ volatile("push {r4-r11, lr}\n"
                     "1:\n\t"
                     "ldr r7, [r0]\n\tldr r9, [r0, r1]\n\tldr r10, [r0, r2]\n\t"
                     "ldrsb r11, [r0, #4]\n\tadd r12, r0, #4\n\tldrsb r4, [r12, r1]\n\t"
                     "ldrsb lr, [r12, r2]\n\tpkhbt r11, r11, r4, lsl #16\n\t"
                     "sxtb16 r7, r7\n\tsxtb16 r9, r9\n\tsxtb16 r10, r10\n\tldr r12, [sp, #36]\n\t"
                     DWM_I2_OUT "strb r5, [r3]\n\t"
                     DWM_I2_OUT "strb r5, [r3, #1]\n\tadds r3, #4\n\t"
                     "ldr r4, [sp, #44]\n\tadd r0, r0, r4\n\tldr r4, [sp, #40]\n\t"
                     "cmp r3, r4\n\tbne 1b\n\tpop {r4-r11, pc}\n");
#undef DWM_I2_OUT
}
#endif

/* Every output of one input channel (in: its first value; pad_row: 2 in_w bytes of
 * -input_offset; tiny: 24 bytes for a border window; x in [ox_lo, ox_hi): windows inside
 * the input along w). */
static void __attribute__((noinline))
dwm_i2_plane(const dwm_args *a, const int8_t *in, const int8_t *pad_row, int8_t *tiny,
             int32_t ox_lo, int32_t ox_hi)
{
    const int32_t in_row = 2 * a->in_w, step = 2 * a->sw, oc = a->out_c;
    const int32_t pad_w = (int32_t)((uint32_t)(uint8_t)a->pad * 0x01010101u);
    int8_t *out_r = a->out;
    for (int32_t oy = 0; oy < a->out_h; oy++, out_r += a->out_w * oc) {
        const int8_t *p[3];
        for (int32_t r = 0; r < 3; r++) {
            const int32_t y = oy * a->sh - a->pt + r * a->dh;
            p[r] = (uint32_t)y < (uint32_t)a->in_h ? in + y * in_row : pad_row;
        }
        const uintptr_t d1 = (uintptr_t)p[1] - (uintptr_t)p[0];
        const uintptr_t d2 = (uintptr_t)p[2] - (uintptr_t)p[0];
        for (int32_t ox = 0; ox < a->out_w; ox++) {
            if (ox == ox_lo && ox_lo < ox_hi) { /* the windows inside along w */
                const int8_t *q = p[0] + (ox_lo * a->sw - a->pl) * 2;
                int8_t *out = out_r + ox_lo * oc;
                int8_t *const end = out_r + ox_hi * oc;
#if TH_NN_DSP_NATIVE
                dwm_i2_row(q, d1, d2, out, a->rec, end, step);
#else
                for (; out != end; q += step, out += oc) {
                    dwm_i2_px(q, d1, d2, a->rec, out);
                }
#endif
                ox = ox_hi;
                if (ox >= a->out_w) {
                    break;
                }
            }
            /* A border window: pad, then the columns inside the input. */
            const int32_t ix = ox * a->sw - a->pl;
            const int32_t c0 = TH_MAX(0, -ix), c1 = TH_MIN(3, a->in_w - ix);
            th_write_s32(tiny, pad_w), th_write_s32(tiny + 8, pad_w);
            th_write_s32(tiny + 16, pad_w);
            tiny[4] = tiny[12] = tiny[20] = (int8_t)a->pad;
            for (int32_t c = c0; c < c1; c++) {
                const int32_t o = 2 * (ix + c);
                tiny[2 * c] = p[0][o], tiny[8 + 2 * c] = p[1][o], tiny[16 + 2 * c] = p[2][o];
            }
#if TH_NN_DSP_NATIVE
            dwm_i2_row(tiny, 8, 16, out_r + ox * oc, a->rec, out_r + ox * oc + 4, 0);
#else
            dwm_i2_px(tiny, 8, 16, a->rec, out_r + ox * oc);
#endif
        }
    }
}

static void __attribute__((noinline))
dwm_i2_run(const dwm_args *a, const int8_t *in, int8_t *work, int32_t ox_lo, int32_t ox_hi)
{
    int8_t *const tiny = work, *const pad_row = work + 24;
    const int32_t pad_w = (int32_t)((uint32_t)(uint8_t)a->pad * 0x01010101u);
    for (int32_t i = 0; i < 24; i += 4) { /* bytes the word reads take but do not use */
        th_write_s32(tiny + i, 0);
    }
    for (int32_t i = 0; i < 2 * a->in_w; i += 4) { /* in_w >= 3: within work's 2 in_w + 24 */
        th_write_s32(pad_row + i, pad_w);
    }
    dwm_i2_plane(a, in, pad_row, tiny, ox_lo, ox_hi);
}

/* Filters of more than TH_DW_MULT_SMALL_TAPS taps: the padded plane, pixel by pixel (a
 * function of its own, like dwm_small_s8, so that the stack holds one of the two frames). */
static void __attribute__((noinline))
dwm_plane_s8(int8_t *scratch, const th_dw_conv_params *params, const th_per_channel_quant *quant,
             const th_dims *input_dims, const int8_t *input, const th_dims *filter_dims,
             const int8_t *filter, const int32_t *bias, const th_dims *output_dims,
             int8_t *output)
{
    int32_t *records = (int32_t *)(void *)scratch;
    int8_t *plane = scratch + dwm_records_bytes(params, filter_dims);
    dwm_args a = dwm_args_make(params, filter_dims, output_dims);
    a.in_h = dwm_plane_h(params, filter_dims, output_dims);
    a.in_w = dwm_plane_w(params, filter_dims, output_dims);
    a.rec = records;
    a.in = plane;
    /* Pair halves in tap order (an odd count ends with none), except 3 x 3 with dilation 1
     * along w: (r c0, r c2) for each row r, then (r0 c1, r1 c1), (r2 c1, -): the SXTB16
     * halves of one word per row. */
    a.rows3 = a.kh == 3 && a.kw == 3 && a.dw == 1;
    static const int8_t rows3_perm[10] = {0, 2, 3, 5, 6, 8, 1, 4, 7, -1};
    for (int32_t t = 0; t < 2 * DWM_KP_MAX; t++) {
        a.perm[t] = (int8_t)(a.rows3 ? (t < 10 ? rows3_perm[t] : -1) : (t < a.taps ? t : -1));
        const int32_t tap = a.perm[t] >= 0 ? a.perm[t] : 0;
        a.toff[t] = (tap / a.kw) * a.dh * a.in_w + (tap % a.kw) * a.dw;
    }
    /* The plane's padding holds -input_offset (a zero term: the offset is in the start
     * values); each channel then writes the input's part: plane (py, px) is input
     * (py - pad_h, px - pad_w). */
    const int32_t in_h = input_dims->h, in_w = input_dims->w, in_c = input_dims->c;
    const int32_t pt = params->padding.h, pl = params->padding.w;
    const int32_t y0 = TH_MIN(pt, a.in_h), y1 = TH_MAX(TH_MIN(pt + in_h, a.in_h), y0);
    const int32_t x0 = TH_MIN(pl, a.in_w), x1 = TH_MAX(TH_MIN(pl + in_w, a.in_w), x0);
    const int8_t pad = (int8_t)(-params->input_offset);
    const int64_t in_batch = (int64_t)in_h * in_w * in_c;
    const int64_t out_batch = (int64_t)a.out_h * a.out_w * a.out_c;
    int32_t filled = 0; /* the plane holds the padding (the two-channel loop's rows do not) */
    /* Two channels: the records in dwm_i2_perm's order where the whole scratch plane holds
     * the pad row and a border window (it does unless the plane is a sliver of the input). */
    const int32_t i2 = in_c == 2 && a.rows3 && a.mult == 2 &&
                       2 * in_w + 24 <= a.in_h * a.in_w + 4;
    for (int32_t ic = 0; ic < in_c; ic++) {
        if (i2) {
            for (int32_t t = 0; t < 10; t++) {
                a.perm[t] = dwm_i2_perm[t];
            }
            if (dwm_records(records, &a, ic, filter, bias, quant, params->input_offset) == 0) {
                /* The input's dimensions in place of the plane's for this channel (no
                 * second dwm_args on the stack). */
                const int32_t plane_h = a.in_h, plane_w = a.in_w;
                a.in_h = in_h, a.in_w = in_w, a.pt = pt, a.pl = pl;
                a.pad = -params->input_offset;
                int32_t ox_lo, ox_hi;
                dwm_inner(a.out_w, a.sw, pl, 3, in_w, &ox_lo, &ox_hi);
                for (int32_t n = 0; n < input_dims->n; n++) {
                    a.out = output + n * out_batch + ic * a.mult;
                    dwm_i2_run(&a, input + n * in_batch + ic, plane, ox_lo, ox_hi);
                }
                a.in_h = plane_h, a.in_w = plane_w;
                filled = 0;
                continue;
            }
            for (int32_t t = 0; t < 10; t++) { /* another mode: the plane's loops */
                a.perm[t] = rows3_perm[t];
            }
        }
        const int32_t mode = dwm_records(records, &a, ic, filter, bias, quant,
                                         params->input_offset);
        const dwm_fn fn = dwm_pick(&a, mode);
        if (!filled) {
            for (int32_t i = 0; i < a.in_h * a.in_w + 4; i++) {
                plane[i] = pad;
            }
            filled = 1;
        }
        for (int32_t n = 0; n < input_dims->n; n++) {
            if (y0 < y1 && x0 < x1) {
                const int8_t *q = input + n * in_batch + ic +
                                  ((int64_t)(y0 - pt) * in_w + (x0 - pl)) * in_c;
                dwm_copy_channel(plane + y0 * a.in_w + x0, q, y1 - y0, x1 - x0, in_c, a.in_w,
                                 (int64_t)in_w * in_c);
            }
            a.out = output + n * out_batch + ic * a.mult;
            fn(&a);
        }
    }
}
void th_nn_dw_mult_s8(int8_t *scratch, const th_dw_conv_params *params,
                      const th_per_channel_quant *quant, const th_dims *input_dims,
                      const int8_t *input, const th_dims *filter_dims, const int8_t *filter,
                      const int32_t *bias, const th_dims *output_dims, int8_t *output)
{
    if (filter_dims->h * filter_dims->w <= TH_DW_MULT_SMALL_TAPS) {
        dwm_small_s8(scratch, params, quant, input_dims, input, filter_dims, filter, bias,
                     output_dims, output);
    } else {
        dwm_plane_s8(scratch, params, quant, input_dims, input, filter_dims, filter, bias,
                     output_dims, output);
    }
}
#endif
