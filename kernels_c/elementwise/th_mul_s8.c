/* th_mul_s8: int8 MUL as TFLite Micro's reference: (x1 + offset1) * (x2 + offset2)
 * requantized with one multiplier (double rounding, the shift may be a left shift),
 * + output offset, clamped. NumPy broadcasting as th_add_s8. MVE builds: four products at
 * a time, th_mve_requantize (exact for every multiplier >= 0 and shift in [-31, 30]).
 * DSP builds (where SMMLAR is exact: fast or left): the same shape four elements a word
 * (SXTAB16 lanes, halfword multiplies); a scalar broadcast (where it pays) as a
 * 256-byte output table made once per call (mul_fill), then one lookup pass
 * (th_nn_lut_run); a channel broadcast through an output table per channel (mul_chan_lut)
 * where those pay, else a stack row of factor pairs made once per call; a spatial broadcast
 * in one call, four outputs of a pixel from one word of x (spatial_t); outputs stored four to a
 * word, the clamp on the packed word. Where the host proved th_mul_prep's line (prepared
 * calls only), the spatial, channel and one-factor rows take it first: one MLA and one
 * SSAT / USAT with ASR #16 an output (spatial_line_t, fast_rows' left 2). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"
#include "th_nn_ew_pack.h"
#include "th_nn_support.h"

/* Largest left shift of the DSP left_rows: 255^2 << (13 + 1) < 2^31. */
#define TH_MUL_MAX_LEFT 13
/* Largest left shift of the spatial loop: its factor (y + oy) << (shift + 1) is a signed
 * halfword (255 << 7 < 2^15) for SMLABB / SMLATB; larger shifts (output scales under 1/64 of
 * the product's) take the per-row loops. */
#define TH_MUL_SPATIAL_MAX_LEFT 6

/* The call's constants: the prepared struct itself (th_nn_types.h th_mul_prep), filled per
 * call by th_mul_s8_prepare or kept in flash by the compiled backend. */
typedef th_mul_prep mul_consts;

/* Requantization constants held in locals: stores through int8_t may alias the struct. */
typedef struct {
    int32_t m;
    int32_t shift;
    int32_t zp;
    int32_t lo;
    int32_t hi;
#if TH_NN_HAS_DSP
    th_fast_rq rq;
#endif
} mul_out_consts;

/* The product (offsets added, |.| <= 255^2) requantized, offset, clamped; fast (a constant
 * after inlining): th_fast_rq_apply, exact when mul_consts.fast. */
TH_INLINE int8_t mul_out(const mul_out_consts *c, int32_t product, int fast)
{
#if TH_NN_HAS_DSP
    if (fast) {
        return (int8_t)th_clamp(th_fast_rq_apply(product, &c->rq), c->lo, c->hi);
    }
#endif
    (void)fast;
    /* large left shifts saturate the product near INT32_MIN/MAX: bound it before the
     * offset so the sum cannot overflow and clamps as the exact (64-bit) sum does */
    const int32_t r = th_clamp(th_requantize(product, c->m, c->shift), -256, 255);
    return (int8_t)th_clamp(r + c->zp, c->lo, c->hi);
}

/* n outputs of (a[i * sa] + oa) * (b[i * sb] + ob), sa and sb 0 or 1 (0: that input
 * broadcast, its factor computed once); each output written after its inputs are read. */
TH_INLINE void mul_row_t(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                         int32_t step_b, int32_t n, int8_t *out, int fast)
{
    const int32_t oa = k->in1_offset, ob = k->in2_offset;
    mul_out_consts c;
    c.m = k->multiplier;
    c.shift = k->shift;
    c.zp = k->out_offset;
    c.lo = k->act_min;
    c.hi = k->act_max;
#if TH_NN_HAS_DSP
    c.rq = k->rq;
#endif
    if (step_a == 0 || step_b == 0) {
        const int32_t f = step_a == 0 ? a[0] + oa : b[0] + ob;
        const int8_t *x = step_a == 0 ? b : a;
        const int32_t ox = step_a == 0 ? ob : oa;
        const int32_t nn = step_a == 0 && step_b == 0 ? 1 : n;
        for (int32_t i = 0; i < nn; i++) {
            out[i] = mul_out(&c, (x[i] + ox) * f, fast);
        }
        for (int32_t i = nn; i < n; i++) {
            out[i] = out[0];
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        out[i] = mul_out(&c, (a[i] + oa) * (b[i] + ob), fast);
    }
}

/* An out-of-line row function `name`: the inline row `body` with its two flags constant
 * (its own registers). */
#define ROW_INSTANCE(name, body, flag1, flag2)                                                \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t f, int32_t n, int8_t *out)             \
    {                                                                                         \
        body(k, x, ox, y, oy, f, n, out, flag1, flag2);                                       \
    }

#if TH_NN_MVE
/* One row on MVE: out[i] = requantized (a[i * sa] + oa) * (b[i * sb] + ob), four lanes at a
 * time, whole vectors then a predicated tail; each group of four written after its inputs
 * are read. bcast (one factor f, x advancing) and right (shift < 0) are constants after
 * inlining. */
TH_INLINE void mve_row_t(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t f, int32_t n, int8_t *out, int bcast, int right)
{
    th_mve_out o;
    o.output_offset = k->out_offset;
    o.act_min = k->act_min;
    o.act_max = k->act_max;
    const int32_t m = k->multiplier, sh = k->shift;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int32x4_t vx = vaddq_n_s32(vldrbq_s32(x + i), ox);
        const int32x4_t v = bcast ? vmulq_n_s32(vx, f)
                                  : vmulq_s32(vx, vaddq_n_s32(vldrbq_s32(y + i), oy));
        vstrbq_s32(out + i, th_mve_requantize_n(v, m, sh, right, &o));
    }
    if (i < n) {
        const mve_pred16_t p = vctp32q((uint32_t)(n - i));
        const int32x4_t vx = vaddq_n_s32(vldrbq_z_s32(x + i, p), ox);
        const int32x4_t v = bcast ? vmulq_n_s32(vx, f)
                                  : vmulq_s32(vx, vaddq_n_s32(vldrbq_z_s32(y + i, p), oy));
        vstrbq_p_s32(out + i, th_mve_requantize_n(v, m, sh, right, &o), p);
    }
}

ROW_INSTANCE(mve_same_left, mve_row_t, 0, 0)
ROW_INSTANCE(mve_same_right, mve_row_t, 0, 1)
ROW_INSTANCE(mve_bcast_left, mve_row_t, 1, 0)
ROW_INSTANCE(mve_bcast_right, mve_row_t, 1, 1)

static void mve_row(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
    const int right = k->shift < 0;
    if (step_a != 0 && step_b != 0) {
        (right ? mve_same_right : mve_same_left)(k, a, k->in1_offset, b, k->in2_offset, 0, n,
                                                 out);
        return;
    }
    const int32_t f = step_a == 0 ? a[0] + k->in1_offset : b[0] + k->in2_offset;
    const int8_t *x = step_a == 0 ? b : a;
    const int32_t ox = step_a == 0 ? k->in2_offset : k->in1_offset;
    const int32_t nn = step_a == 0 && step_b == 0 ? 1 : n;
    (right ? mve_bcast_right : mve_bcast_left)(k, x, ox, x, 0, f, nn, out);
    if (nn < n) {
        th_nn_mve_fill(out + 1, out[0], n - 1);
    }
}
#endif

#if TH_NN_HAS_DSP && !TH_NN_MVE
typedef void (*row_fn)(const mul_consts *, const int8_t *, int32_t, const int8_t *, int32_t,
                       int32_t, int32_t, int8_t *);

/* The line form's shift (th_mul_prep line; arith/elementwise.py MUL_LINE_E): an immediate,
 * so the saturation takes it (SSAT / USAT with ASR #16), one loop for every layer. */
#define TH_MUL_LINE_E 16

/* sat(acc >> TH_MUL_LINE_E) to int8 (SSAT) or, usat, to [0, 255] (USAT), one instruction. */
TH_INLINE int32_t mul_line_sat(int32_t acc, int usat)
{
#if TH_NN_DSP_NATIVE
    int32_t r;
    if (usat) {
        __asm__("usat %0, #8, %1, asr #16" : "=r"(r) : "r"(acc));
    } else {
        __asm__("ssat %0, #8, %1, asr #16" : "=r"(r) : "r"(acc));
    }
    return r;
#else
    return usat ? th_clamp(acc >> TH_MUL_LINE_E, 0, 255) : th_ssat8(acc >> TH_MUL_LINE_E);
#endif
}

/* The DSP rows: x advancing (offset ox), y advancing too (same) or a constant factor f
 * (bcast); clamp (a constant after inlining): the activation range is narrower than int8's
 * (both requantizations saturate to int8 already). left: the shift L = shift is in [0,
 * TH_MUL_MAX_LEFT], with no right shift and so no second rounding: TFLM's SRDHM(p << L, M)
 * = floor((p * 2^L * M + 2^30) / 2^31) (its nudge-and-truncate equals this floor, see
 * th_fast_rq_apply) = SMMLAR(p << (L + 1), M, 0) exactly (|p| <= 255^2 < 2^16 keeps
 * p << (L + 1) inside int32), the zero point in SMMLAR's accumulator; else th_fast_rq_apply
 * (2p given). left 2: the host-proven line (th_mul_prep line), f the slope m of the factor's
 * value (channel rows: gh's pairs (m, ox m + line_k)), mul_line_sat on x m + ox m + line_k.
 * Kept out of line: their own registers. */
TH_INLINE void fast_rows(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t f, const int32_t *gh, int32_t n, int8_t *out,
                         int bcast, int clamp, int left)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    const int32_t m = k->multiplier, zp = clamp ? k->out_offset - lo : k->out_offset;
    const int32_t sh = left ? k->shift + 1 : 1;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    /* bcast 1: product << sh = x * fs + cs; bcast 2 (channel rows): x * g + h with the pair
     * (g, h) = gh[2i], gh[2i + 1] made the same way from the broadcast value at i */
    const int32_t fs = left == 2 ? f : (int32_t)((uint32_t)f << sh);
    const int32_t cs = left == 2 ? (int32_t)((uint32_t)ox * (uint32_t)f + (uint32_t)k->line_k)
                                 : (int32_t)((uint32_t)(ox * f) << sh);
#define MUL_P(i)                                                                              \
    (bcast == 2 ? x[i] * gh[2 * (i)] + gh[2 * (i) + 1]                                        \
     : bcast    ? x[i] * fs + cs                                                              \
                : (int32_t)((uint32_t)((x[i] + ox) * (y[i] + oy)) << sh))
#define MUL_V(p)                                                                              \
    (left == 2 ? mul_line_sat((p), clamp)                                                     \
     : clamp   ? (left ? th_nn_usat8(th_smmlar((p), m, zp)) : th_nn_rq_apply2u((p), &rq))     \
               : (left ? th_ssat8(th_smmlar((p), m, zp)) : th_fast_rq_apply2((p), &rq)))
#define MUL_4(o, v0, v1, v2, v3)                                                              \
    do {                                                                                      \
        if (clamp) {                                                                          \
            th_nn_store4u(o, v0, v1, v2, v3, k4, c4);                                         \
        } else {                                                                              \
            th_nn_store4(o, v0, v1, v2, v3, 0, 0, 0, 0);                                      \
        }                                                                                     \
    } while (0)
    int32_t i = 0;
    /* same shape: four elements of each input from one word, offsets added in 16-bit lanes
     * (SXTAB16, |x + ox| <= 255), the products from halfword multiplies */
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t oy2 = (int32_t)(((uint32_t)oy & 0xFFFFu) | ((uint32_t)oy << 16));
    const int32_t fs2 = (int32_t)(((uint32_t)fs & 0xFFFFu) | ((uint32_t)fs << 16));
#define SH(p) (left ? (int32_t)((uint32_t)(p) << sh) : (p))
    for (; i + 4 <= n; i += 4) { /* one word out, the clamp on the packed word */
        if (bcast == 0) {
            const int32_t xw = th_read_s32(x + i), yw = th_read_s32(y + i);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            int32_t y02 = th_sxtab16(oy2, yw), y13 = th_sxtab16_ror8(oy2, yw);
            if (!left) { /* the doubling in y's lanes (|2 (y + oy)| <= 510): two SADD16 */
                y02 = th_sadd16(y02, y02);
                y13 = th_sadd16(y13, y13);
            }
            MUL_4(out + i, MUL_V(SH(th_nn_smulbb(x02, y02))), MUL_V(SH(th_nn_smulbb(x13, y13))),
                  MUL_V(SH(th_nn_smultt(x02, y02))), MUL_V(SH(th_nn_smultt(x13, y13))));
        } else if (bcast == 1 && !left) {
            /* a scalar factor, right shift: as the same-shape words, x's lanes (offset
             * added) times fs (= 2f, |.| <= 510) in both halfwords, one load for four */
            const int32_t xw = th_read_s32(x + i);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            MUL_4(out + i, MUL_V(th_nn_smulbb(x02, fs2)), MUL_V(th_nn_smulbb(x13, fs2)),
                  MUL_V(th_nn_smultt(x02, fs2)), MUL_V(th_nn_smultt(x13, fs2)));
        } else {
            MUL_4(out + i, MUL_V(MUL_P(i)), MUL_V(MUL_P(i + 1)), MUL_V(MUL_P(i + 2)),
                  MUL_V(MUL_P(i + 3)));
        }
    }
#undef SH
    for (; i < n; i++) {
        const int32_t v = MUL_V(MUL_P(i));
        out[i] = clamp ? th_nn_from_u(v, lo, hi) : (int8_t)v;
    }
#undef MUL_4
#undef MUL_P
#undef MUL_V
}

#define DSP_ROW(name, bcast, clamp, left)                                                     \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t f, int32_t n, int8_t *out)             \
    {                                                                                         \
        fast_rows(k, x, ox, y, oy, f, NULL, n, out, bcast, clamp, left);                      \
    }
DSP_ROW(fast_same, 0, 0, 0)
DSP_ROW(fast_same_clamp, 0, 1, 0)
DSP_ROW(fast_bcast, 1, 0, 0)
DSP_ROW(fast_bcast_clamp, 1, 1, 0)
DSP_ROW(left_same, 0, 0, 1)
DSP_ROW(left_same_clamp, 0, 1, 1)
DSP_ROW(left_bcast, 1, 0, 1)
DSP_ROW(left_bcast_clamp, 1, 1, 1)
DSP_ROW(line_bcast, 1, 0, 2)
DSP_ROW(line_bcast_clamp, 1, 1, 2)
#undef DSP_ROW

/* Channel broadcast rows (fast_rows' bcast 2): x against the pairs gh, n elements. */
typedef void (*chan_fn)(const mul_consts *, const int8_t *, const int32_t *, int32_t, int8_t *);
#define CHAN_ROW(name, clamp, left)                                                           \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               const int32_t *gh, int32_t n, int8_t *out)     \
    {                                                                                         \
        fast_rows(k, x, 0, x, 0, 0, gh, n, out, 2, clamp, left);                              \
    }
CHAN_ROW(chan_left, 0, 1)
CHAN_ROW(chan_left_clamp, 1, 1)
CHAN_ROW(chan_line, 0, 2)
CHAN_ROW(chan_line_clamp, 1, 2)
#undef CHAN_ROW

/* SSAT #8 of y >> ei, ei an immediate in [1, TH_MUL_IMM_E] (a constant after inlining):
 * the shift in the saturation's operand, one instruction where ASR by a register and SSAT
 * take two. */
#define TH_MUL_IMM_E 8
TH_INLINE int32_t mul_ssat8_imm(int32_t y, int ei)
{
#if TH_NN_DSP_NATIVE
    int32_t r;
#define MUL_SSAT_E(E) __asm__("ssat %0, #8, %1, asr #" #E : "=r"(r) : "r"(y))
    switch (ei) {
    case 1: MUL_SSAT_E(1); break;
    case 2: MUL_SSAT_E(2); break;
    case 3: MUL_SSAT_E(3); break;
    case 4: MUL_SSAT_E(4); break;
    case 5: MUL_SSAT_E(5); break;
    case 6: MUL_SSAT_E(6); break;
    case 7: MUL_SSAT_E(7); break;
    default: MUL_SSAT_E(8); break;
    }
#undef MUL_SSAT_E
    return r;
#else
    return th_ssat8(y >> ei);
#endif
}

/* th_fast_rq_apply2 (ns: the sign term dropped, th_mul_prep nosign; usat: th_nn_rq_apply2u's
 * unsigned saturation); ei > 0: rq's e as that immediate (mul_ssat8_imm, int8 only). */
TH_INLINE int32_t rq2_ns(int32_t acc2, const th_fast_rq *rq, int ns, int usat, int ei)
{
    int32_t y = th_smmlar(acc2, rq->multiplier, rq->round_zp);
    if (!ns) {
        y += acc2 >> 31;
    }
    if (ei > 0 && !usat) {
        return mul_ssat8_imm(y, ei);
    }
    return usat ? th_nn_usat8(y >> rq->e) : th_ssat8(y >> rq->e);
}

/* The two words at *p, *p then advanced by two: one LDRD with write-back on the device (GCC
 * makes two indexed loads of the same C). */
TH_INLINE void mul_ldrd2(const int32_t **p, int32_t *a, int32_t *b)
{
#if TH_NN_DSP_NATIVE
    __asm__("ldrd %0, %1, [%2], #8"
            : "=r"(*a), "=r"(*b), "+r"(*p)
            : "m"(*(const int32_t(*)[2]) * p));
#else
    *a = (*p)[0];
    *b = (*p)[1];
    *p += 2;
#endif
}

/* The word at *p (any alignment), *p then advanced by four: LDR with write-back on the
 * device (its own instruction, so a loop of two words a pass keeps both write-backs). */
TH_INLINE int32_t mul_ldr_inc(const int8_t **p)
{
#if TH_NN_DSP_NATIVE
    int32_t v;
    __asm__("ldr %0, [%1], #4" : "=r"(v), "+r"(*p) : "m"(*(const int8_t(*)[4]) * p));
    return v;
#else
    const int32_t v = th_read_s32(*p);
    *p += 4;
    return v;
#endif
}

/* w to the word at *p (any alignment), *p then advanced by four (STR with write-back). */
TH_INLINE void mul_str_inc(int8_t **p, uint32_t w)
{
#if TH_NN_DSP_NATIVE
    __asm__("str %2, [%0], #4" : "+r"(*p), "=m"(*(int8_t(*)[4]) * p) : "r"(w));
#else
    th_write_s32(*p, (int32_t)w);
    *p += 4;
#endif
}

/* Channel rows on the fast path (right shift), four outputs a pass: x's word split into
 * (x0 + ox, x2 + ox) and (x1 + ox, x3 + ox) halfwords (SXTAB16), the factors 2 (y + oy) of
 * those columns packed the same way (|.| <= 510) in two words pw[2q], pw[2q + 1], so SMULBB /
 * SMULTT give the four doubled products th_fast_rq_apply2 takes; the n % 4 last columns one
 * factor a word after them. `rows` rows of n at stride `stride` (x and out alike); each group
 * read before it is written. */
TH_INLINE void chanv_t(const mul_consts *k, const int8_t *x, int32_t ox, const int32_t *pw,
                       int32_t n, int32_t rows, int32_t stride, int8_t *out, int clamp, int ei)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    const th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t *tail = pw + 2 * (n >> 2);
    const int32_t n4 = n & ~3;
    /* one index for x and out, counting up to 0 (its step is the loop's test); the factor
     * pairs through their own pointer (one LDRD with write-back a word) */
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *xr = x + r * stride;
        int8_t *o = out + r * stride;
        const int8_t *const xe = xr + n4;
        int8_t *const oe = o + n4;
        const int32_t *fw = pw;
#define CV_V(p) (clamp ? th_nn_rq_apply2u((p), &rq) : rq2_ns((p), &rq, 0, 0, ei))
        if (!clamp) {
            /* int8: two words a pass as spatial_t's (the loop's CMP / BNE a word of eight
             * outputs), an odd word by a jump into a pass's second word */
            const int8_t *xp = xr;
            int8_t *op = o;
#define CV_W()                                                                                \
    do {                                                                                      \
        const int32_t xw = mul_ldr_inc(&xp);                                                  \
        const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);              \
        int32_t f02, f13;                                                                     \
        mul_ldrd2(&fw, &f02, &f13);                                                           \
        mul_str_inc(&op, th_nn_pack4(CV_V(th_nn_smulbb(x02, f02)), CV_V(th_nn_smulbb(x13, f13)), \
                                     CV_V(th_nn_smultt(x02, f02)),                            \
                                     CV_V(th_nn_smultt(x13, f13))));                          \
    } while (0)
            if ((n4 & 4) != 0) {
                goto cv_odd; /* into the pass's second word: one copy of the word */
            }
            while (xp != xe) {
                CV_W();
            cv_odd:
                CV_W();
            }
#undef CV_W
        } else
        for (int32_t j = -n4; j != 0; j += 4) {
            const int32_t xw = th_read_s32(xe + j);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            int32_t f02, f13;
            mul_ldrd2(&fw, &f02, &f13);
            const int32_t v0 = CV_V(th_nn_smulbb(x02, f02)), v1 = CV_V(th_nn_smulbb(x13, f13));
            const int32_t v2 = CV_V(th_nn_smultt(x02, f02)), v3 = CV_V(th_nn_smultt(x13, f13));
            if (clamp) {
                th_nn_store4u(oe + j, v0, v1, v2, v3, k4, c4);
            } else {
                th_nn_store4(oe + j, v0, v1, v2, v3, 0, 0, 0, 0);
            }
        }
        for (int32_t i = n4, t = 0; i < n; i++, t++) {
            const int32_t v = CV_V((xr[i] + ox) * tail[t]);
            o[i] = clamp ? th_nn_from_u(v, lo, hi) : (int8_t)v;
#undef CV_V
        }
    }
}

typedef void (*chanv_fn)(const mul_consts *, const int8_t *, int32_t, const int32_t *, int32_t,
                         int32_t, int32_t, int8_t *);
#define CHANV(name, clamp, ei)                                                                \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int32_t *pw, int32_t n,      \
                                               int32_t rows, int32_t stride, int8_t *out)     \
    {                                                                                         \
        chanv_t(k, x, ox, pw, n, rows, stride, out, clamp, ei);                               \
    }
CHANV(chanv_fast, 0, 0)
CHANV(chanv_fast_clamp, 1, 0)
/* int8, e = -shift an immediate (mul_ssat8_imm): an instance (and a path) a shift */
CHANV(chanv_fast_e1, 0, 1)
CHANV(chanv_fast_e2, 0, 2)
CHANV(chanv_fast_e3, 0, 3)
CHANV(chanv_fast_e4, 0, 4)
CHANV(chanv_fast_e5, 0, 5)
CHANV(chanv_fast_e6, 0, 6)
CHANV(chanv_fast_e7, 0, 7)
CHANV(chanv_fast_e8, 0, 8)
#undef CHANV

/* The immediate-shift instance for rq's e (chanv_fast_e1 .. e8) where the build keeps it,
 * else NULL. */
static chanv_fn chanv_imm(int32_t e)
{
    switch (e) {
    case 1: return TH_NN_PATH(MUL_CHAN_E1) ? chanv_fast_e1 : NULL;
    case 2: return TH_NN_PATH(MUL_CHAN_E2) ? chanv_fast_e2 : NULL;
    case 3: return TH_NN_PATH(MUL_CHAN_E3) ? chanv_fast_e3 : NULL;
    case 4: return TH_NN_PATH(MUL_CHAN_E4) ? chanv_fast_e4 : NULL;
    case 5: return TH_NN_PATH(MUL_CHAN_E5) ? chanv_fast_e5 : NULL;
    case 6: return TH_NN_PATH(MUL_CHAN_E6) ? chanv_fast_e6 : NULL;
    case 7: return TH_NN_PATH(MUL_CHAN_E7) ? chanv_fast_e7 : NULL;
    case 8: return TH_NN_PATH(MUL_CHAN_E8) ? chanv_fast_e8 : NULL;
    default: return NULL;
    }
}

/* chanv_t's packed factors of n columns, column j's factor f(j) = 2 (y[j % len] + oy): y's
 * bytes taken in turn by a pointer that wraps at len, four at a time without the wrap test
 * where four remain before it (no division a column). */
static void chanv_pack(const int8_t *y, int32_t oy, int32_t len, int32_t n, int32_t *pw)
{
    const int8_t *p = y;
    const int8_t *const e = y + len;
    const int32_t oy2 = 2 * oy;
    int32_t j = 0;
#define F_NEXT(v)                                                                             \
    do {                                                                                      \
        (v) = 2 * *p++ + oy2;                                                                 \
        if (p == e) {                                                                         \
            p = y;                                                                            \
        }                                                                                     \
    } while (0)
    for (; j + 4 <= n; j += 4, pw += 2) {
        int32_t f0, f1, f2, f3;
        if (e - p > 4) {
            f0 = 2 * p[0] + oy2;
            f1 = 2 * p[1] + oy2;
            f2 = 2 * p[2] + oy2;
            f3 = 2 * p[3] + oy2;
            p += 4;
        } else {
            F_NEXT(f0);
            F_NEXT(f1);
            F_NEXT(f2);
            F_NEXT(f3);
        }
        pw[0] = th_pkhbt(f0, f2);
        pw[1] = th_pkhbt(f1, f3);
    }
    for (; j < n; j++) {
        F_NEXT(*pw);
        pw++;
    }
#undef F_NEXT
}

/* Channel broadcast: [rows, n] (x, input offset ox) against one row y of n (offset oy), on
 * the DSP rows (k->fast or k->left). The row's factors are built once per call into a stack
 * row of TH_MUL_CHAN_MAX columns (fast: chanv_t's packed halfwords; left: (g, h) pairs):
 * short rows repeated to fill it (consecutive rows are contiguous), long rows in column
 * blocks. 0 when the build leaves the path out. */
#define TH_MUL_CHAN_MAX 32
/* chanv_pack's columns in gh (two words a four, a word a column of a tail: len + len % 4
 * <= this) */
#define TH_MUL_CHAN_PACKED (4 * TH_MUL_CHAN_MAX)
__attribute__((noinline)) static int mul_chan(const mul_consts *k, const int8_t *x, int32_t ox,
                                              const int8_t *y, int32_t oy, int32_t n,
                                              int32_t rows, int8_t *out, int line)
{
    if (!TH_NN_PATH(MUL_CHAN)) {
        return 0;
    }
    const int clamp = k->act_min > -128 || k->act_max < 127;
    int32_t gh[2 * TH_MUL_CHAN_MAX];
    const int32_t block = n <= TH_MUL_CHAN_MAX / 2 ? n : TH_MUL_CHAN_MAX;
    int32_t reps = n <= TH_MUL_CHAN_MAX / 2 ? TH_MUL_CHAN_MAX / n : 1;
    reps = reps < rows ? reps : rows;
    if (!line && !k->left) { /* chanv_t: the packed factors in gh, the row loop in the call */
        const chanv_fn fi = clamp ? NULL : chanv_imm(k->rq.e);
        const chanv_fn fv = clamp ? chanv_fast_clamp : fi != NULL ? fi : chanv_fast;
        /* half a word a column: gh holds TH_MUL_CHAN_PACKED columns, so rows up to half of
         * that are repeated, as many as fit, fewer (down by up to three) where a multiple of
         * four columns leaves chanv_t's row no tail */
        const int32_t cap = n <= TH_MUL_CHAN_PACKED / 2 ? TH_MUL_CHAN_PACKED / n : 1;
        reps = cap;
        for (int32_t r = cap; r > 0 && r > cap - 4; r--) {
            if (((r * n) & 3) == 0) {
                reps = r;
                break;
            }
        }
        reps = reps < rows ? reps : rows;
        /* longer rows in blocks of a multiple of four columns (a block's tail word per
         * column of n % 4 would not fit after TH_MUL_CHAN_PACKED columns' words) */
        const int32_t pblock = TH_MUL_CHAN_PACKED - 4;
        if (reps > 1) { /* reps rows as one row of reps * n, then what is left */
            const int32_t len = reps * n, full = rows / reps, left = rows - full * reps;
            chanv_pack(y, oy, n, len, gh);
            fv(k, x, ox, gh, len, full, len, out);
            if (left > 0) { /* its own tail: packed again for left * n columns */
                chanv_pack(y, oy, n, left * n, gh);
                fv(k, x + full * len, ox, gh, left * n, 1, 0, out + full * len);
            }
            return 1;
        }
        for (int32_t j0 = 0; j0 < n; j0 += pblock) {
            const int32_t len = n - j0 < pblock ? n - j0 : pblock;
            chanv_pack(y + j0, oy, len, len, gh);
            fv(k, x + j0, ox, gh, len, rows, n, out + j0);
        }
        return 1;
    }
    /* line (th_mul_prep line proven): the pairs (m, ox m + line_k) of mul_line_sat's line;
     * else the left rows' (g, ox g) */
    const chan_fn f = line ? (clamp ? chan_line_clamp : chan_line)
                           : (clamp ? chan_left_clamp : chan_left);
    const int32_t sh = k->shift + 1, la = k->line_a, lt = k->line_t;
    const uint32_t lr = line ? (UINT32_C(1) << (lt - 1)) + (uint32_t)oy * (uint32_t)la : 0u;
    for (int32_t j0 = 0; j0 < n; j0 += block) {
        const int32_t len = n - j0 < block ? n - j0 : block;
        for (int32_t j = 0; j < reps * len; j++) {
            const int32_t yv = y[j0 + j % len];
            const int32_t g = line ? (int32_t)((uint32_t)yv * (uint32_t)la + lr) >> lt
                                   : (int32_t)((uint32_t)(yv + oy) << sh);
            gh[2 * j] = g;
            gh[2 * j + 1] = (int32_t)((uint32_t)ox * (uint32_t)g +
                                      (line ? (uint32_t)k->line_k : 0u));
        }
        for (int32_t r = 0; r < rows; r += reps) {
            const int32_t cnt = rows - r < reps ? rows - r : reps;
            if (reps > 1) { /* cnt rows of n, contiguous */
                f(k, x + r * n, gh, cnt * n, out + r * n);
            } else {
                f(k, x + r * n + j0, gh, len, out + r * n + j0);
            }
        }
    }
    return 1;
}

/* Spatial broadcast: [rows, n] (x, offset ox) against [rows, 1] (y, offset oy), one call per
 * layer; pixels are contiguous in x and out, so both pointers just run on and a pixel costs
 * about 10 instructions besides its outputs (its factor f = y + oy and what derives from it).
 * Right shift (fast): four outputs from one word of x, split into (x0 + ox, x2 + ox) and
 * (x1 + ox, x3 + ox) halfwords (SXTAB16) and multiplied by 2f in both halfwords (SMULBB /
 * SMULTT, |2f| <= 510), the doubled products th_fast_rq_apply2 takes; left (see fast_rows):
 * (x + ox) * f << (shift + 1) = x * fs + cs, one MLA. The n % 4 last outputs of a pixel
 * without a loop; each output written after its inputs are read. */
TH_INLINE void spatial_t(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t n, int32_t rows, int8_t *out, int clamp, int left,
                         int ns, int ei)
{
    /* clamp: th_nn_store4u's unsigned form, lo folded into the zero point */
    const int32_t lo = k->act_min, hi = k->act_max;
    th_fast_rq rq = clamp ? th_nn_rq_less(k->rq, lo) : k->rq;
    if (ns) { /* the sign term proven idle (th_mul_prep nosign): round_zp - 1 for 2 */
        rq.round_zp = (int32_t)((uint32_t)rq.round_zp - (uint32_t)(k->nosign == 2));
    }
    const int32_t m = k->multiplier, zp = clamp ? k->out_offset - lo : k->out_offset;
    const int32_t sh = left ? k->shift + 1 : 1;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    const int32_t ox2 = (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16));
    const int32_t n4 = n & ~3, nt = n & 3;
    const int8_t *const yend = y + rows;
    const uint32_t oys = (uint32_t)oy << sh;
    do {
        const int32_t fs = (int32_t)(((uint32_t)*y++ << sh) + oys); /* (y + oy) << sh */
        /* left: the tails' MLA constant; right: the tails take SMULBB of (x + ox) and fp as
         * the words do (no constant live across the pixel's words: fewer spills) */
        const int32_t cs = left ? (int32_t)((uint32_t)ox * (uint32_t)fs) : 0;
        const int32_t fp = th_pkhbt(fs, fs); /* fs in both halfwords: one PKHBT */
#define MS_V(p)                                                                               \
    (clamp ? (left ? th_nn_usat8(th_smmlar((p), m, zp)) : rq2_ns((p), &rq, ns, 1, 0))         \
           : (left ? th_ssat8(th_smmlar((p), m, zp)) : rq2_ns((p), &rq, ns, 0, ei)))
#define MS_C(p) (clamp ? th_nn_from_u(MS_V(p), lo, hi) : MS_V(p))
/* right: the tails' x + ox by SXTAB16 on ox2 (its low lane) as the words', so ox itself is not
 * live across the pixels (one spill fewer a pixel) */
#define MS_P(j) (left ? x[j] * fs + cs : th_nn_smulbb(th_sxtab16(ox2, (uint8_t)x[j]), fp))
#define MS_4(v0, v1, v2, v3)                                                                  \
    do {                                                                                      \
        if (clamp) {                                                                          \
            th_nn_store4u(out, v0, v1, v2, v3, k4, c4);                                       \
        } else {                                                                              \
            th_nn_store4(out, v0, v1, v2, v3, 0, 0, 0, 0);                                    \
        }                                                                                     \
    } while (0)
        if (!clamp && !left) {
            /* int8 right-shift rows: two words a pass (the loop's CMP / BNE a word of eight
             * outputs: 48 instructions where two passes took 50), an odd word first (a jump into
             * the pass's second word, as chanv_t's, makes GCC spill in the loop) */
#define MS_W()                                                                                \
    do {                                                                                      \
        const int32_t xw = mul_ldr_inc(&x);                                                   \
        const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);              \
        mul_str_inc(&out, th_nn_pack4(MS_V(th_nn_smulbb(x02, fp)), MS_V(th_nn_smulbb(x13, fp)), \
                                      MS_V(th_nn_smultt(x02, fp)),                            \
                                      MS_V(th_nn_smultt(x13, fp))));                          \
    } while (0)
            const int8_t *const e8 = x + n4;
            if ((n4 & 4) != 0) {
                MS_W();
            }
            while (x != e8) {
                MS_W();
                MS_W();
            }
#undef MS_W
        } else
        for (const int8_t *const e4 = x + n4; x != e4; x += 4, out += 4) {
            if (left) { /* |fs| < 2^15 (TH_MUL_SPATIAL_MAX_LEFT): x's word as sign-extended
                         * halfword lanes, the products accumulated onto cs by SMLABB /
                         * SMLATB, 7 instructions where four LDRSB + MLA pairs take 8 */
                const int32_t xw = th_read_s32(x);
                const int32_t x02 = th_sxtb16(xw), x13 = th_sxtb16_ror8(xw);
                MS_4(MS_V(th_smlabb(x02, fs, cs)), MS_V(th_smlabb(x13, fs, cs)),
                     MS_V(th_smlatb(x02, fs, cs)), MS_V(th_smlatb(x13, fs, cs)));
            } else {
                const int32_t xw = th_read_s32(x);
                const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
                MS_4(MS_V(th_nn_smulbb(x02, fp)), MS_V(th_nn_smulbb(x13, fp)),
                     MS_V(th_nn_smultt(x02, fp)), MS_V(th_nn_smultt(x13, fp)));
            }
        }
#undef MS_4
#define MS_O(j) MS_C(MS_P(j))
        TH_NN_EW_TAIL3(nt, x, out, MS_O);
#undef MS_O
#undef MS_P
#undef MS_C
#undef MS_V
    } while (y != yend);
}

typedef void (*spatial_fn)(const mul_consts *, const int8_t *, int32_t, const int8_t *, int32_t,
                           int32_t, int32_t, int8_t *);
#define SPATIAL(name, clamp, left, ns, ei)                                                    \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t n, int32_t rows, int8_t *out)          \
    {                                                                                         \
        spatial_t(k, x, ox, y, oy, n, rows, out, clamp, left, ns, ei);                        \
    }
SPATIAL(spatial_fast, 0, 0, 0, 0)
SPATIAL(spatial_fast_clamp, 1, 0, 0, 0)
SPATIAL(spatial_left, 0, 1, 0, 0)
SPATIAL(spatial_left_clamp, 1, 1, 0, 0)
/* the sign term proven idle (th_mul_prep nosign): one instruction an output fewer */
SPATIAL(spatial_fast_ns, 0, 0, 1, 0)
SPATIAL(spatial_fast_clamp_ns, 1, 0, 1, 0)
/* int8 outputs with the sign term, e = -shift an immediate (mul_ssat8_imm): one instruction
 * an output fewer, an instance (and a path) a shift of the 1-8 the sweep's scales give */
#undef SPATIAL
static int spatial_pairs(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                         int32_t oy, int32_t n, int32_t rows, int8_t *out);
/* the e instances: pixels of whole word pairs (C % 8 == 0, x and out word-aligned) by
 * spatial_pairs' assembly loop where the build keeps it; the test here, not in the
 * caller, so calls of other shapes pay one TST / branch */
#define SPATIAL_E(name, ei)                                                                   \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t n, int32_t rows, int8_t *out)          \
    {                                                                                         \
        if ((n & 7) == 0 && (((uintptr_t)x | (uintptr_t)out) & 3u) == 0 &&                   \
            spatial_pairs(k, x, ox, y, oy, n, rows, out)) {                                   \
            return;                                                                           \
        }                                                                                     \
        spatial_t(k, x, ox, y, oy, n, rows, out, 0, 0, 0, ei);                                \
    }
SPATIAL_E(spatial_fast_e1, 1)
SPATIAL_E(spatial_fast_e2, 2)
SPATIAL_E(spatial_fast_e3, 3)
SPATIAL_E(spatial_fast_e4, 4)
SPATIAL_E(spatial_fast_e5, 5)
SPATIAL_E(spatial_fast_e6, 6)
SPATIAL_E(spatial_fast_e7, 7)
SPATIAL_E(spatial_fast_e8, 8)
#undef SPATIAL_E

/* The immediate-shift instance for rq's e (spatial_fast_e1 .. e8) where the build keeps it,
 * else NULL. */
static spatial_fn spatial_imm(int32_t e)
{
    switch (e) {
    case 1: return TH_NN_PATH(MUL_SPATIAL_E1) ? spatial_fast_e1 : NULL;
    case 2: return TH_NN_PATH(MUL_SPATIAL_E2) ? spatial_fast_e2 : NULL;
    case 3: return TH_NN_PATH(MUL_SPATIAL_E3) ? spatial_fast_e3 : NULL;
    case 4: return TH_NN_PATH(MUL_SPATIAL_E4) ? spatial_fast_e4 : NULL;
    case 5: return TH_NN_PATH(MUL_SPATIAL_E5) ? spatial_fast_e5 : NULL;
    case 6: return TH_NN_PATH(MUL_SPATIAL_E6) ? spatial_fast_e6 : NULL;
    case 7: return TH_NN_PATH(MUL_SPATIAL_E7) ? spatial_fast_e7 : NULL;
    case 8: return TH_NN_PATH(MUL_SPATIAL_E8) ? spatial_fast_e8 : NULL;
    default: return NULL;
    }
}

/* The int8 spatial rows of spatial_fast_e1..e8 (the sign term kept, e an immediate) where
 * C % 8 == 0 and x and out are word-aligned, in one assembly loop on the native DSP builds:
 * every pixel is whole word pairs, so one LDRD and one STRD carry two words of four outputs
 * and nothing is live across the pixels but what 14 registers hold (the compiled C spills:
 * ~16 instructions a pixel, 24 a word). A word: two SXTAB16 (x + ox in halfword lanes), per
 * output SMULBB / SMULTT by fp = 2 (y + oy) in both halfwords, SMMLAR, the sign term's ADD
 * (ASR #31) and SSAT #8 with ASR #e, three BFI: 21, so 23 a word with the pair's LDRD /
 * STRD and CMP / BNE; a pixel 9 (its factor by LDRSB, ADD, PKHBT; y's pointer on the
 * stack). Exactly rq2_ns(.., 0, 0, e)'s outputs (the same instructions). blk: ox2, the
 * multiplier, rq's round_zp, 2 oy, C, pixels (rows >= 1); each pair of words written after
 * it is read (in place too). */
#define TH_MUL_SP2_WORDS 6
#if TH_NN_DSP_NATIVE
#define MUL_SP2_OUT(dst, mul, xr, E)                                                          \
    mul " r10, " xr ", r4\n\t"                                                                \
    "smmlar r11, r10, r5, r6\n\t"                                                             \
    "add r11, r11, r10, asr #31\n\t"                                                          \
    "ssat " dst ", #8, r11, asr #" #E "\n\t"
#define MUL_SP2_WORD(xw, ow, E)                                                               \
    "sxtab16 r9, r3, " xw ", ror #8\n\t"                                                      \
    "sxtab16 " xw ", r3, " xw "\n\t"                                                          \
    MUL_SP2_OUT(ow, "smulbb", xw, E)                                                          \
    MUL_SP2_OUT("r11", "smulbb", "r9", E)                                                     \
    "bfi " ow ", r11, #8, #8\n\t"                                                             \
    MUL_SP2_OUT("r11", "smultt", xw, E)                                                       \
    "bfi " ow ", r11, #16, #8\n\t"                                                            \
    MUL_SP2_OUT("r11", "smultt", "r9", E)                                                     \
    "bfi " ow ", r11, #24, #8\n\t"
#define MUL_SP2(name, E)                                                                      \
    static void __attribute__((naked, noinline)) name(const int8_t *x, int8_t *out,          \
                                                      const int8_t *y, const int32_t *blk)    \
    {                                                                                         \
        __asm__ volatile(                                                                     \
            "push {r4-r11, lr}\n\t"                                                           \
            "sub sp, sp, #16\n\t"                                                             \
            "ldmia r3, {r3, r5, r6, r7, r8, r9}\n\t" /* ox2 M rz 2oy C pixels */              \
            "add r9, r2, r9\n\t"                                                              \
            "strd r2, r9, [sp]\n\t"                  /* y, y's end */                         \
            "strd r7, r8, [sp, #8]\n\t"              /* 2oy, C */                             \
            "mov r7, r2\n\t"                                                                  \
            "1:\n\t"                                 /* a pixel, r7 y */                      \
            "ldrsb r10, [r7], #1\n\t"                                                         \
            "ldrd r8, r9, [sp, #8]\n\t"                                                       \
            "str r7, [sp]\n\t"                                                                \
            "add r10, r8, r10, lsl #1\n\t"                                                    \
            "pkhbt r4, r10, r10, lsl #16\n\t"        /* fp */                                 \
            "add r2, r0, r9\n\t"                     /* the pixel's end in x */               \
            "2:\n\t"                                 /* a pair of words */                    \
            "ldrd r7, r8, [r0], #8\n\t"                                                       \
            MUL_SP2_WORD("r7", "r12", E)                                                      \
            MUL_SP2_WORD("r8", "lr", E)                                                       \
            "strd r12, lr, [r1], #8\n\t"                                                      \
            "cmp r0, r2\n\t"                                                                  \
            "bne 2b\n\t"                                                                      \
            "ldrd r7, r8, [sp]\n\t"                                                           \
            "cmp r7, r8\n\t"                                                                  \
            "bne 1b\n\t"                                                                      \
            "add sp, sp, #16\n\t"                                                             \
            "pop {r4-r11, pc}\n\t");                                                          \
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
MUL_SP2(mul_sp2_e1, 1)
MUL_SP2(mul_sp2_e2, 2)
MUL_SP2(mul_sp2_e3, 3)
MUL_SP2(mul_sp2_e4, 4)
MUL_SP2(mul_sp2_e5, 5)
MUL_SP2(mul_sp2_e6, 6)
MUL_SP2(mul_sp2_e7, 7)
MUL_SP2(mul_sp2_e8, 8)
#pragma GCC diagnostic pop
#undef MUL_SP2
#undef MUL_SP2_WORD
#undef MUL_SP2_OUT
#else
/* The host's model of the loop, step for step from the same block, e a parameter. */
static void mul_sp2_t(const int8_t *x, int8_t *out, const int8_t *y, const int32_t *blk,
                      int32_t e)
{
    const int32_t ox2 = blk[0], c = blk[4];
    const th_fast_rq rq = {blk[1], blk[2], e};
    const int8_t *const yend = y + blk[5];
    do {
        const int32_t fs = (int32_t)(((uint32_t)*y++ << 1) + (uint32_t)blk[3]);
        const int32_t fp = th_pkhbt(fs, fs);
        for (const int8_t *const e8 = x + c; x != e8; x += 4, out += 4) {
            const int32_t xw = th_read_s32(x);
            const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
            th_write_s32(out, (int32_t)th_nn_pack4(rq2_ns(th_nn_smulbb(x02, fp), &rq, 0, 0, 0),
                                                   rq2_ns(th_nn_smulbb(x13, fp), &rq, 0, 0, 0),
                                                   rq2_ns(th_nn_smultt(x02, fp), &rq, 0, 0, 0),
                                                   rq2_ns(th_nn_smultt(x13, fp), &rq, 0, 0, 0)));
        }
    } while (y != yend);
}
#define MUL_SP2(name, E)                                                                      \
    static void name(const int8_t *x, int8_t *out, const int8_t *y, const int32_t *blk)       \
    {                                                                                         \
        mul_sp2_t(x, out, y, blk, E);                                                         \
    }
MUL_SP2(mul_sp2_e1, 1)
MUL_SP2(mul_sp2_e2, 2)
MUL_SP2(mul_sp2_e3, 3)
MUL_SP2(mul_sp2_e4, 4)
MUL_SP2(mul_sp2_e5, 5)
MUL_SP2(mul_sp2_e6, 6)
MUL_SP2(mul_sp2_e7, 7)
MUL_SP2(mul_sp2_e8, 8)
#undef MUL_SP2
#endif

typedef void (*sp2_fn)(const int8_t *, int8_t *, const int8_t *, const int32_t *);

/* spatial_fast_e<e> as mul_sp2_e<e> for the caller's C % 8 == 0 (C >= 8; one pixel: a
 * scalar broadcast), x and out word-aligned (LDRD / STRD), where the build keeps
 * MUL_SPATIAL_PAIRS and the e instance; 1 when done. */
__attribute__((noinline)) static int spatial_pairs(const mul_consts *k, const int8_t *x,
                                                   int32_t ox, const int8_t *y, int32_t oy,
                                                   int32_t n, int32_t rows, int8_t *out)
{
    if (!TH_NN_PATH(MUL_SPATIAL_PAIRS)) {
        return 0;
    }
    sp2_fn f = NULL;
    switch (k->rq.e) { /* the instance of spatial_imm's path (each kept alone, as there) */
    case 1: f = TH_NN_PATH(MUL_SPATIAL_E1) ? mul_sp2_e1 : NULL; break;
    case 2: f = TH_NN_PATH(MUL_SPATIAL_E2) ? mul_sp2_e2 : NULL; break;
    case 3: f = TH_NN_PATH(MUL_SPATIAL_E3) ? mul_sp2_e3 : NULL; break;
    case 4: f = TH_NN_PATH(MUL_SPATIAL_E4) ? mul_sp2_e4 : NULL; break;
    case 5: f = TH_NN_PATH(MUL_SPATIAL_E5) ? mul_sp2_e5 : NULL; break;
    case 6: f = TH_NN_PATH(MUL_SPATIAL_E6) ? mul_sp2_e6 : NULL; break;
    case 7: f = TH_NN_PATH(MUL_SPATIAL_E7) ? mul_sp2_e7 : NULL; break;
    case 8: f = TH_NN_PATH(MUL_SPATIAL_E8) ? mul_sp2_e8 : NULL; break;
    default: break;
    }
    if (f == NULL) {
        return 0;
    }
    const int32_t blk[TH_MUL_SP2_WORDS] = {
        (int32_t)(((uint32_t)ox & 0xFFFFu) | ((uint32_t)ox << 16)), k->multiplier,
        k->rq.round_zp, (int32_t)((uint32_t)oy << 1), n, rows};
    f(x, out, y, blk);
    return 1;
}

/* The host-chosen scalar loop (th_mul_prep sc, ARCHITECTURE.md §4.4b): an int8 scalar
 * broadcast on the right-shift rows with the sign term, e = -shift an immediate. Outputs as
 * spatial_t's (x's word split into (x0 + ox, x2 + ox) and (x1 + ox, x3 + ox) halfwords by
 * SXTAB16, SMULBB / SMULTT by 2f in both halfwords, SMMLAR, the sign term, SSAT with ASR #e,
 * BFI), but two words a load and a store (LDM / STM: 21 instructions a word where the C
 * loops take 23 and their loop's test) and no set-up beyond one LDM of sc_w (n,
 * multiplier, round_zp, ox in both halfwords, 2 oy): an odd word first, then pairs of words two a
 * pass, then the n % 4 last outputs one by one. x and out word-aligned (LDM / STM; the
 * caller checks); each output written after its inputs are read (in place too). */
#define TH_MUL_SC_WORDS 5
#if TH_NN_DSP_NATIVE
/* One word of four from the word in XW (then its output word there): r4 M, r5 round_zp, r6
 * ox2, r7 the factor pair; r8-r12 scratch. */
#define MUL_SC_OUT(E, P, D)                                                                   \
    "smmlar " D ", " P ", r4, r5\n\t"                                                         \
    "add " D ", " D ", " P ", asr #31\n\t"                                                    \
    "ssat " D ", #8, " D ", asr #" #E "\n\t"
#define MUL_SC_WORD(E, XW)                                                                    \
    "sxtab16 r8, r6, " XW "\n\t"                                                              \
    "sxtab16 r9, r6, " XW ", ror #8\n\t"                                                      \
    "smulbb r10, r8, r7\n\t"                                                                  \
    "smultt r8, r8, r7\n\t"                                                                   \
    "smulbb r11, r9, r7\n\t"                                                                  \
    "smultt r9, r9, r7\n\t"                                                                   \
    MUL_SC_OUT(E, "r10", XW)                                                                  \
    MUL_SC_OUT(E, "r11", "r12")                                                               \
    "bfi " XW ", r12, #8, #8\n\t"                                                             \
    MUL_SC_OUT(E, "r8", "r12")                                                                \
    "bfi " XW ", r12, #16, #8\n\t"                                                            \
    MUL_SC_OUT(E, "r9", "r12")                                                                \
    "bfi " XW ", r12, #24, #8\n\t"
#define MUL_SC_PAIR(E)                                                                        \
    "ldmia r0!, {r2, r3}\n\t"                                                                 \
    MUL_SC_WORD(E, "r2")                                                                      \
    MUL_SC_WORD(E, "r3")                                                                      \
    "stmia r1!, {r2, r3}\n\t"
#define MUL_SC_RUN(name, E)                                                                   \
    static void __attribute__((naked, noinline)) name(const int8_t *x, int8_t *out,          \
                                                      const int8_t *y, const int32_t *w)     \
    {                                                                                         \
        __asm__ volatile(                                                                     \
            "push {r3-r11, lr}\n\t"                                                           \
            "ldmia r3, {r3, r4, r5, r6, r7}\n\t"     /* n M rzp ox2 oy2 */                   \
            "ldrsb r2, [r2]\n\t"                                                              \
            "add r2, r7, r2, lsl #1\n\t"             /* 2 (y + oy) */                        \
            "pkhbt r7, r2, r2, lsl #16\n\t"          /* in both halfwords */                 \
            "tst r3, #4\n\t"                                                                  \
            "beq 1f\n\t"                                                                      \
            "ldr r2, [r0], #4\n\t"                   /* the odd word */                      \
            MUL_SC_WORD(E, "r2")                                                              \
            "str r2, [r1], #4\n\t"                                                            \
            "1:\n\t"                                                                          \
            "bics lr, r3, #7\n\t"                    /* Z: no pairs */                       \
            "add lr, r0, lr\n\t"                     /* the pairs' end in x */               \
            "beq 4f\n\t"                                                                      \
            "tst r3, #8\n\t"                                                                  \
            "bne 3f\n\t"                             /* an odd pair: the pass's second */    \
            "2:\n\t"                                                                          \
            MUL_SC_PAIR(E)                                                                    \
            "3:\n\t"                                                                          \
            MUL_SC_PAIR(E)                                                                    \
            "cmp r0, lr\n\t"                                                                  \
            "bne 2b\n\t"                                                                      \
            "4:\n\t"                                                                          \
            "ldr r8, [sp]\n\t"                                                                \
            "ldr r8, [r8]\n\t"                                                                \
            "ands r8, r8, #3\n\t"                    /* the last n % 4 one by one */         \
            "beq 6f\n\t"                                                                      \
            "5:\n\t"                                                                          \
            "ldrb r2, [r0], #1\n\t"                                                           \
            "sxtab16 r2, r6, r2\n\t"                                                          \
            "smulbb r10, r2, r7\n\t"                                                          \
            MUL_SC_OUT(E, "r10", "r2")                                                        \
            "strb r2, [r1], #1\n\t"                                                           \
            "subs r8, r8, #1\n\t"                                                             \
            "bne 5b\n\t"                                                                      \
            "6:\n\t"                                                                          \
            "pop {r3-r11, pc}\n\t");                                                          \
    }
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
MUL_SC_RUN(mul_sc_e1, 1)
MUL_SC_RUN(mul_sc_e2, 2)
MUL_SC_RUN(mul_sc_e3, 3)
MUL_SC_RUN(mul_sc_e4, 4)
MUL_SC_RUN(mul_sc_e5, 5)
MUL_SC_RUN(mul_sc_e6, 6)
MUL_SC_RUN(mul_sc_e7, 7)
MUL_SC_RUN(mul_sc_e8, 8)
#pragma GCC diagnostic pop
#undef MUL_SC_RUN
#undef MUL_SC_PAIR
#undef MUL_SC_WORD
#undef MUL_SC_OUT
#else
/* The host's model of mul_sc_run, step for step from the same block (the emulated DSP builds
 * test the block the host fills): e the instance's immediate. */
TH_INLINE void mul_sc_model(const int8_t *x, int8_t *out, const int8_t *y, const int32_t *w,
                            int ei)
{
    const int32_t n = w[0], m = w[1], z = w[2], ox2 = w[3];
    const int32_t f2 = (int32_t)((uint32_t)w[4] + ((uint32_t)y[0] << 1));
    const int32_t fp = th_pkhbt(f2, f2);
#define SC_V(p) mul_ssat8_imm(th_smmlar((p), m, z) + ((p) >> 31), ei)
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const int32_t xw = th_read_s32(x + i);
        const int32_t x02 = th_sxtab16(ox2, xw), x13 = th_sxtab16_ror8(ox2, xw);
        th_write_s32(out + i, (int32_t)th_nn_pack4(SC_V(th_nn_smulbb(x02, fp)),
                                                   SC_V(th_nn_smulbb(x13, fp)),
                                                   SC_V(th_nn_smultt(x02, fp)),
                                                   SC_V(th_nn_smultt(x13, fp))));
    }
    for (; i < n; i++) {
        out[i] = (int8_t)SC_V(th_nn_smulbb(th_sxtab16(ox2, (uint8_t)x[i]), fp));
    }
#undef SC_V
}

#define MUL_SC_RUN(name, E)                                                                   \
    static void name(const int8_t *x, int8_t *out, const int8_t *y, const int32_t *w)        \
    {                                                                                         \
        mul_sc_model(x, out, y, w, E);                                                        \
    }
MUL_SC_RUN(mul_sc_e1, 1)
MUL_SC_RUN(mul_sc_e2, 2)
MUL_SC_RUN(mul_sc_e3, 3)
MUL_SC_RUN(mul_sc_e4, 4)
MUL_SC_RUN(mul_sc_e5, 5)
MUL_SC_RUN(mul_sc_e6, 6)
MUL_SC_RUN(mul_sc_e7, 7)
MUL_SC_RUN(mul_sc_e8, 8)
#undef MUL_SC_RUN
#endif

typedef void (*mul_sc_fn)(const int8_t *, int8_t *, const int8_t *, const int32_t *);

/* The scalar loop's instance for e where the build keeps it, else NULL. */
static mul_sc_fn mul_sc_imm(int32_t e)
{
    switch (e) {
    case 1: return TH_NN_PATH(MUL_SCALAR_E1) ? mul_sc_e1 : NULL;
    case 2: return TH_NN_PATH(MUL_SCALAR_E2) ? mul_sc_e2 : NULL;
    case 3: return TH_NN_PATH(MUL_SCALAR_E3) ? mul_sc_e3 : NULL;
    case 4: return TH_NN_PATH(MUL_SCALAR_E4) ? mul_sc_e4 : NULL;
    case 5: return TH_NN_PATH(MUL_SCALAR_E5) ? mul_sc_e5 : NULL;
    case 6: return TH_NN_PATH(MUL_SCALAR_E6) ? mul_sc_e6 : NULL;
    case 7: return TH_NN_PATH(MUL_SCALAR_E7) ? mul_sc_e7 : NULL;
    case 8: return TH_NN_PATH(MUL_SCALAR_E8) ? mul_sc_e8 : NULL;
    default: return NULL;
    }
}

/* Spatial broadcast on the host-proven line (th_mul_prep line, ARCHITECTURE.md §4.4b): per
 * pixel the slope m = ((y + oy) line_a + 2^(line_t - 1)) >> line_t and c = ox m + line_k
 * (three instructions after y's load), then per output LDRSB, MLA x m + c and the
 * saturation with its shift (the proof covers every (x, y) pair exactly as computed here,
 * int32 without wrap): four outputs packed to a word; clamp: USAT and th_nn_store4u's clamp
 * of the packed word (the proof's target is the output less act_min). */
TH_INLINE void spatial_line_t(const mul_consts *k, const int8_t *x, int32_t ox, const int8_t *y,
                              int32_t oy, int32_t n, int32_t rows, int8_t *out, int clamp)
{
    const int32_t lo = k->act_min, hi = k->act_max;
    const uint32_t k4 = th_nn_both_k4(lo, hi), c4 = th_nn_both_c4(hi);
    const int32_t la = k->line_a, lt = k->line_t, lk = k->line_k;
    /* (y + oy) la + 2^(lt - 1) as y la + r (mod 2^32: the sum is inside int32, proven) */
    const int32_t r = (int32_t)((uint32_t)oy * (uint32_t)la + (UINT32_C(1) << (lt - 1)));
    const int32_t n4 = n & ~3, nt = n & 3;
    const int8_t *const yend = y + rows;
    do {
        const int32_t m = (int32_t)((uint32_t)*y++ * (uint32_t)la + (uint32_t)r) >> lt;
        const int32_t c = (int32_t)((uint32_t)ox * (uint32_t)m + (uint32_t)lk);
#define ML_V(j) mul_line_sat((int32_t)((uint32_t)x[j] * (uint32_t)m + (uint32_t)c), clamp)
        for (const int8_t *const e4 = x + n4; x != e4; x += 4, out += 4) {
            const int32_t v0 = ML_V(0), v1 = ML_V(1), v2 = ML_V(2), v3 = ML_V(3);
            if (clamp) {
                th_nn_store4u(out, v0, v1, v2, v3, k4, c4);
            } else {
                th_nn_store4(out, v0, v1, v2, v3, 0, 0, 0, 0);
            }
        }
#define ML_O(j) (clamp ? th_nn_from_u(ML_V(j), lo, hi) : ML_V(j))
        TH_NN_EW_TAIL3(nt, x, out, ML_O);
#undef ML_O
#undef ML_V
    } while (y != yend);
}

#define SPATIAL_LINE(name, clamp)                                                             \
    __attribute__((noinline)) static void name(const mul_consts *k, const int8_t *x,          \
                                               int32_t ox, const int8_t *y, int32_t oy,       \
                                               int32_t n, int32_t rows, int8_t *out)          \
    {                                                                                         \
        spatial_line_t(k, x, ox, y, oy, n, rows, out, clamp);                                 \
    }
SPATIAL_LINE(spatial_line, 0)
SPATIAL_LINE(spatial_line_clamp, 1)
#undef SPATIAL_LINE

/* The clamped spatial line (spatial_line_t with clamp) in one assembly loop on the native
 * DSP builds, where the compiled C spills 9 of its ~36 per-pixel instructions: per pixel one
 * LDM brings the line's constants from the stack, m and c in three instructions, the n % 4
 * first outputs one by one (LDRSB, MLA, USAT with ASR #16, the clamp's UQADD8 / UADD8 on the
 * byte, STRB), then words of four: four LDRSB and MLA, the accumulators' top halfwords paired
 * by PKHTB (acc >> 16 exactly: an int32 shifted by 16 is a halfword), USAT16 #8 saturates
 * both lanes as USAT would, one ORR packs the two pairs, and th_nn_store4u's clamp (18
 * instructions a word where the C loop takes 24). Exactly spatial_line_t's outputs
 * (ARCHITECTURE.md §4.4b: the proof covers every (x, y) pair as computed here). pw: the block
 * th_mul_prep px_w holds (mul_px_block: line_a, r, line_t, ox, line_k, n, n % 4, k4, c4,
 * rows); n >= 4 (a word a pixel at least); each output written after its input is read (in
 * place too). */
#define TH_MUL_PX_WORDS 10
#if TH_NN_DSP_NATIVE
#define MUL_PX_ONE                                                                            \
    "ldrsb r9, [r0], #1\n\t"                                                                  \
    "mla r9, r9, r6, r7\n\t"                                                                  \
    "usat r9, #8, r9, asr #16\n\t"                                                            \
    "uqadd8 r9, r9, r4\n\t"                                                                   \
    "uadd8 r9, r9, r5\n\t"                                                                    \
    "strb r9, [r1], #1\n\t"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline)) mul_px_run(const int8_t *x, int8_t *out,
                                                        const int8_t *y, const int32_t *pw)
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #24\n\t"
        "ldmia r3!, {r4-r9}\n\t"                     /* la r lt ox lk n: to the stack */
        "stmia sp, {r4-r9}\n\t"
        "ldmia r3, {r3, r4, r5, r12}\n\t"            /* nt k4 c4 rows */
        "add lr, r2, r12\n\t"                        /* y's end */
        "1:\n\t"                                     /* a pixel */
        "ldrsb r9, [r2], #1\n\t"
        "ldmia sp, {r6, r7, r8, r10, r11, r12}\n\t"
        "mla r6, r9, r6, r7\n\t"
        "asr r6, r6, r8\n\t"                          /* m */
        "mla r7, r10, r6, r11\n\t"                    /* c = ox m + lk */
        "add r8, r0, r12\n\t"                         /* the pixel's end in x */
        "cbz r3, 3f\n\t"
        "cmp r3, #2\n\t"
        "blt 2f\n\t"
        "beq 4f\n\t"
        MUL_PX_ONE
        "4:\n\t"
        MUL_PX_ONE
        "2:\n\t"
        MUL_PX_ONE
        "3:\n\t"                                     /* words of four */
        "ldrsb r9, [r0], #4\n\t"
        "ldrsb r10, [r0, #-3]\n\t"
        "ldrsb r11, [r0, #-2]\n\t"
        "ldrsb r12, [r0, #-1]\n\t"
        "mla r9, r9, r6, r7\n\t"
        "mla r10, r10, r6, r7\n\t"
        "mla r11, r11, r6, r7\n\t"
        "mla r12, r12, r6, r7\n\t"
        "pkhtb r9, r11, r9, asr #16\n\t"
        "pkhtb r10, r12, r10, asr #16\n\t"
        "usat16 r9, #8, r9\n\t"
        "usat16 r10, #8, r10\n\t"
        "orr r9, r9, r10, lsl #8\n\t"
        "uqadd8 r9, r9, r4\n\t"
        "uadd8 r9, r9, r5\n\t"
        "str r9, [r1], #4\n\t"
        "cmp r0, r8\n\t"
        "bne 3b\n\t"
        "cmp r2, lr\n\t"
        "bne 1b\n\t"
        "add sp, sp, #24\n\t"
        "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#undef MUL_PX_ONE
#else
/* The host's model of mul_px_run, step for step from the same block (the emulated DSP builds
 * test the block the host fills). */
static void mul_px_run(const int8_t *x, int8_t *out, const int8_t *y, const int32_t *pw)
{
    const uint32_t la = (uint32_t)pw[0], r = (uint32_t)pw[1], ox = (uint32_t)pw[3];
    const uint32_t lk = (uint32_t)pw[4], k4 = (uint32_t)pw[7], c4 = (uint32_t)pw[8];
    const int32_t lt = pw[2], n = pw[5], nt = pw[6];
    const int8_t *const yend = y + pw[9];
    do {
        const int32_t m = (int32_t)((uint32_t)*y++ * la + r) >> lt;
        const uint32_t c = ox * (uint32_t)m + lk;
        const int8_t *const e = x + n;
        for (int32_t i = 0; i < nt; i++) {
            const int32_t u = mul_line_sat((int32_t)((uint32_t)*x++ * (uint32_t)m + c), 1);
            int8_t b[4];
            th_nn_store4u(b, u, 0, 0, 0, k4, c4);
            *out++ = b[0];
        }
        for (; x != e; x += 4, out += 4) {
#define PX_V(j) mul_line_sat((int32_t)((uint32_t)x[j] * (uint32_t)m + c), 1)
            th_nn_store4u(out, PX_V(0), PX_V(1), PX_V(2), PX_V(3), k4, c4);
#undef PX_V
        }
    } while (y != yend);
}
#endif

/* th_mul_prep px_w for the clamped line with x on the other side from the factor y (offsets
 * ox, oy), pixels of n >= 4 outputs, `rows` of them; as arith/elementwise.py mul_px. */
static void mul_px_block(const mul_consts *k, int32_t ox, int32_t oy, int32_t n, int32_t rows,
                         int32_t *pw)
{
    const int32_t la = k->line_a, lt = k->line_t;
    pw[0] = la;
    pw[1] = (int32_t)((uint32_t)oy * (uint32_t)la + (UINT32_C(1) << (lt - 1)));
    pw[2] = lt;
    pw[3] = ox;
    pw[4] = k->line_k;
    pw[5] = n;
    pw[6] = n & 3;
    pw[7] = (int32_t)th_nn_both_k4(k->act_min, k->act_max);
    pw[8] = (int32_t)th_nn_both_c4(k->act_max);
    pw[9] = rows;
}

/* The clamped spatial line, n >= 4, where the host did not choose it (th_mul_prep px 0). */
__attribute__((noinline)) static void spatial_line_px(const mul_consts *k, const int8_t *x,
                                                      int32_t ox, const int8_t *y, int32_t oy,
                                                      int32_t n, int32_t rows, int8_t *out)
{
    int32_t pw[TH_MUL_PX_WORDS];
    mul_px_block(k, ox, oy, n, rows, pw);
    mul_px_run(x, out, y, pw);
}

/* Channel rows on the clamped line, flat: [rows, n] against one row y of n, consecutive
 * rows contiguous, so `reps` rows make one run of P = reps n outputs (a multiple of four)
 * whose line pairs (m_j, c_j = ox m_j + line_k) a stack block gh holds in column order; the
 * call is whole runs of P, gh's pointer reset each run, where mul_chan's rows of n (a tail
 * each when n % 4 != 0) take about 6.5 an output. Per word of four: two LDM of two pairs,
 * four LDRSB and MLA, then mul_px_run's PKHTB / USAT16 / ORR packing and the clamp: 20
 * instructions. cb: k4, c4, P (outputs a run), the call's outputs (a multiple of P). */
#define TH_MUL_CF_MAX 32 /* pairs in gh (256 bytes): n with lcm(n, 4) <= this */
#if TH_NN_DSP_NATIVE
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static void __attribute__((naked, noinline)) mul_cf_run(const int8_t *x, int8_t *out,
                                                        const int32_t *gh, const int32_t *cb)
{
    __asm__ volatile(
        "push {r4-r11, lr}\n\t"
        "sub sp, sp, #16\n\t"
        "ldmia r3, {r4, r5, r6, r7}\n\t"             /* k4 c4 P count */
        "add r7, r0, r7\n\t"                         /* x's end */
        "stmia sp, {r2, r6, r7}\n\t"                 /* gh P end */
        "1:\n\t"                                     /* a run of P */
        "ldmia sp, {r2, r3}\n\t"
        "add r3, r0, r3\n\t"
        "2:\n\t"                                     /* a word of four */
        "ldmia r2!, {r6, r7, r8, r9}\n\t"            /* m0 c0 m1 c1 */
        "ldrsb r10, [r0], #4\n\t"
        "ldrsb r11, [r0, #-3]\n\t"
        "mla r7, r10, r6, r7\n\t"
        "mla r9, r11, r8, r9\n\t"
        "ldmia r2!, {r6, r8, r10, r11}\n\t"          /* m2 c2 m3 c3 */
        "ldrsb r12, [r0, #-2]\n\t"
        "ldrsb lr, [r0, #-1]\n\t"
        "mla r8, r12, r6, r8\n\t"
        "mla r11, lr, r10, r11\n\t"
        "pkhtb r7, r8, r7, asr #16\n\t"
        "pkhtb r9, r11, r9, asr #16\n\t"
        "usat16 r7, #8, r7\n\t"
        "usat16 r9, #8, r9\n\t"
        "orr r7, r7, r9, lsl #8\n\t"
        "uqadd8 r7, r7, r4\n\t"
        "uadd8 r7, r7, r5\n\t"
        "str r7, [r1], #4\n\t"
        "cmp r0, r3\n\t"
        "bne 2b\n\t"
        "ldr r12, [sp, #8]\n\t"
        "cmp r0, r12\n\t"
        "bne 1b\n\t"
        "add sp, sp, #16\n\t"
        "pop {r4-r11, pc}\n\t");
}
#pragma GCC diagnostic pop
#else
/* The host's model of mul_cf_run from the same blocks. */
static void mul_cf_run(const int8_t *x, int8_t *out, const int32_t *gh, const int32_t *cb)
{
    const uint32_t k4 = (uint32_t)cb[0], c4 = (uint32_t)cb[1];
    const int8_t *const end = x + cb[3];
    do {
        const int32_t *g = gh;
        for (const int8_t *const e = x + cb[2]; x != e; x += 4, out += 4, g += 8) {
#define CF_V(j) mul_line_sat((int32_t)((uint32_t)x[j] * (uint32_t)g[2 * (j)] +               \
                                       (uint32_t)g[2 * (j) + 1]), 1)
            th_nn_store4u(out, CF_V(0), CF_V(1), CF_V(2), CF_V(3), k4, c4);
#undef CF_V
        }
    } while (x != end);
}
#endif

/* lcm(n, 4), the fewest columns of whole rows a run of words holds. */
TH_INLINE int32_t mul_cf_base(int32_t n)
{
    return (n & 1) ? 4 * n : (n & 2) ? 2 * n : n;
}

/* Whether the flat channel line applies to [rows, n] with the factor on `side`. */
TH_INLINE int mul_cf_ok(const mul_consts *k, int32_t side, int32_t n, int32_t rows)
{
    const int32_t base = mul_cf_base(n);
    return k->line == side && (k->act_min > -128 || k->act_max < 127) &&
           base <= TH_MUL_CF_MAX && rows >= base / n;
}

/* The flat channel line (mul_cf_ok holds): x [rows, n] (offset ox) against y (offset oy). */
__attribute__((noinline)) static void mul_chan_flat(const mul_consts *k, const int8_t *x,
                                                    int32_t ox, const int8_t *y, int32_t oy,
                                                    int32_t n, int32_t rows, int8_t *out)
{
    const int32_t r0 = mul_cf_base(n) / n; /* rows a run holds at least */
    int32_t reps = r0 * (TH_MUL_CF_MAX / (r0 * n));
    const int32_t rmax = rows - rows % r0;
    reps = reps < rmax ? reps : rmax;
    const int32_t len = reps * n;
    int32_t gh[2 * TH_MUL_CF_MAX];
    const uint32_t la = (uint32_t)k->line_a, lk = (uint32_t)k->line_k;
    const int32_t lt = k->line_t;
    const uint32_t lr = (UINT32_C(1) << (lt - 1)) + (uint32_t)oy * la;
    for (int32_t j = 0; j < n; j++) {
        const int32_t m = (int32_t)((uint32_t)y[j] * la + lr) >> lt;
        gh[2 * j] = m;
        gh[2 * j + 1] = (int32_t)((uint32_t)ox * (uint32_t)m + lk);
    }
    for (int32_t j = 2 * n; j < 2 * len; j++) { /* the other rows of a run: copies */
        gh[j] = gh[j - 2 * n];
    }
    int32_t cb[4];
    cb[0] = (int32_t)th_nn_both_k4(k->act_min, k->act_max);
    cb[1] = (int32_t)th_nn_both_c4(k->act_max);
    cb[2] = len;
    cb[3] = (rows / reps) * len;
    mul_cf_run(x, out, gh, cb);
    /* the rows left (fewer than reps): their words as one shorter run, then up to three */
    const int32_t done = cb[3], left = rows * n - done, left4 = left & ~3;
    if (left4 > 0) {
        cb[2] = left4;
        cb[3] = left4;
        mul_cf_run(x + done, out + done, gh, cb);
    }
    for (int32_t i = left4; i < left; i++) {
        const int32_t v = mul_line_sat((int32_t)((uint32_t)x[done + i] * (uint32_t)gh[2 * i] +
                                                 (uint32_t)gh[2 * i + 1]), 1);
        out[done + i] = th_nn_from_u(v, k->act_min, k->act_max);
    }
}

/* The output table of x's int8 values (offset ox) times the factor f (the other input's value
 * plus its offset): the product p = (x + ox) * f, linear in x, is requantized as fast_rows
 * does (th_nn_mono_fill's acc = p << sh, sh = 1 with th_fast_rq_apply2's sign term (fast),
 * or shift + 1 with none and e = 0 (left)), so exact by construction; the saturated ends as
 * runs, SMMLAR and a shift between them. */
TH_INLINE void mul_mono(const mul_consts *k, int32_t f, int32_t ox, th_nn_mono *q)
{
    const int32_t sh = k->left ? k->shift + 1 : 1;
    q->tab = NULL;
    q->k = (int32_t)((uint32_t)f << sh);
    q->c = (int32_t)((uint32_t)(ox * f) << sh);
    q->m = k->multiplier;
    q->rzp = k->left ? k->out_offset : k->rq.round_zp;
    q->rzp_neg = k->left ? q->rzp : (int32_t)((uint32_t)q->rzp - 1u);
    q->e = k->left ? 0 : k->rq.e;
    q->lo = k->act_min;
    q->hi = k->act_max;
}

/* cnt table words of inner entries of one acc sign (zero point z), acc the first entry's:
 * four SMMLAR and shifts packed into a word store, 4.5 instructions an entry (e > 15; see
 * mul_inner_words). */
TH_INLINE void mul_inner_words_e(uint32_t acc, uint32_t kk, int32_t m, int32_t z, int32_t e,
                                 uint32_t *dst, int32_t cnt)
{
    const uint32_t k2 = 2u * kk, k3 = 3u * kk, k4 = 4u * kk;
    for (uint32_t *const end = dst + cnt; dst != end; dst++, acc += k4) {
        *dst = th_nn_pack4(th_smmlar((int32_t)acc, m, z) >> e,
                           th_smmlar((int32_t)(acc + kk), m, z) >> e,
                           th_smmlar((int32_t)(acc + k2), m, z) >> e,
                           th_smmlar((int32_t)(acc + k3), m, z) >> e);
    }
}

/* SMMLA: acc + the high word of a * b, truncated (mod 2^32). */
TH_INLINE uint32_t mul_smmla(int32_t a, int32_t b, uint32_t acc)
{
#if TH_NN_DSP_NATIVE
    uint32_t r;
    __asm__("smmla %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
#else
    return acc + (uint32_t)(((int64_t)a * b) >> 32);
#endif
}

/* The top half of t over the top half of b (PKHTB with ASR #16). */
TH_INLINE uint32_t mul_pkhtb16(uint32_t t, uint32_t b)
{
#if TH_NN_DSP_NATIVE
    uint32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(t), "r"(b));
    return r;
#else
    return (t & UINT32_C(0xFFFF0000)) | (b >> 16);
#endif
}

/* Inner words (mul_inner_words_e for e > 15); for e <= 15 with the shift moved to the left:
 * SMMLA of acc << (16 - e) with the accumulator Z = 2^(15-e) + z 2^(16-e) + 2^23 gives Y with Y >> 16 = v + 128
 * exactly (floor((Z 2^32 + acc m 2^(16-e)) / 2^48) = floor((acc m + 2^31 + z 2^32 +
 * 2^(39+e)) / 2^(32+e)), SMMLAR's rounding and the shift by e in one floor), and v + 128 in
 * [0, 255] leaves Y's top byte 0 (inner entries: v strictly inside int8); acc << (16 - e)
 * must stay inside int32: checked on the run's two ends (acc is linear), which holds for
 * every normalized multiplier (m >= 2^30 bounds |acc| by about 2^(10+e)). Two PKHTB put entries 0 and 2 (1 and 3) in the
 * bytes 0 and 2 of a word, an ORR with a shift merges them and an EOR takes off the 128:
 * 15 instructions a word against 18 (the ASR per entry and the BFIs). Out of line: its own
 * registers. */
__attribute__((noinline)) static void mul_inner_words(uint32_t acc, uint32_t kk, int32_t m,
                                                      int32_t z, int32_t e, uint32_t *dst,
                                                      int32_t cnt)
{
    /* short runs (most tables' inner words come in runs of one or two between edge words)
     * keep the plain loop: its set-up is 10 instructions shorter */
    if (cnt < 5 || e > 15) {
        mul_inner_words_e(acc, kk, m, z, e, dst, cnt);
        return;
    }
    const uint32_t lim = UINT32_C(1) << (15 + e);
    const uint32_t last = acc + (4u * (uint32_t)cnt - 1u) * kk;
    if (acc + lim >= 2u * lim || last + lim >= 2u * lim) { /* -lim <= acc < lim */
        mul_inner_words_e(acc, kk, m, z, e, dst, cnt);
        return;
    }
    const int32_t ls = 16 - e;
    const uint32_t zz = (UINT32_C(1) << (15 - e)) + ((uint32_t)z << ls) + (UINT32_C(1) << 23);
    const uint32_t k1 = kk << ls, k2 = 2u * k1, k3 = 3u * k1, k4 = 4u * k1;
    acc <<= ls;
    for (uint32_t *const end = dst + cnt; dst != end; dst++, acc += k4) {
        const uint32_t y0 = mul_smmla((int32_t)acc, m, zz);
        const uint32_t y1 = mul_smmla((int32_t)(acc + k1), m, zz);
        const uint32_t y2 = mul_smmla((int32_t)(acc + k2), m, zz);
        const uint32_t y3 = mul_smmla((int32_t)(acc + k3), m, zz);
        const uint32_t ra = mul_pkhtb16(y2, y0), rb = mul_pkhtb16(y3, y1);
        *dst = (ra | (rb << 8)) ^ UINT32_C(0x80808080);
    }
}

/* The word of entries a .. a + 3 exactly (th_nn_mono_v with tab NULL): acc = c + k a, SMMLAR's
 * accumulator rzp, less 1 where acc < 0 when rzp_neg is rzp - 1 (dm = 2^31, acc's sign bit
 * taken down by an arithmetic shift; dm = 0 where rzp_neg == rzp, as mul_mono makes them),
 * saturated, packed, and the clamp to lo4 / hi4 (the splatted bounds) on the packed word
 * (th_nn_clamp4): about 30 instructions a word across an edge. q's fields in registers: the
 * caller's local copy (stores through uint32_t * may alias a th_nn_mono). */
TH_INLINE uint32_t mul_edge_word(const th_nn_mono *q, int32_t a, uint32_t dm, uint32_t lo4,
                                 uint32_t hi4)
{
    const uint32_t kk = (uint32_t)q->k, acc = (uint32_t)q->c + kk * (uint32_t)a;
#define ME_V(d)                                                                               \
    th_ssat8(th_smmlar((int32_t)(acc + (d) * kk), q->m,                                        \
                       q->rzp + ((int32_t)((acc + (d) * kk) & dm) >> 31)) >>                   \
             q->e)
    const uint32_t w = th_nn_pack4(ME_V(0u), ME_V(1u), ME_V(2u), ME_V(3u));
#undef ME_V
    return th_nn_clamp4(w, lo4, hi4, 1);
}

/* Words [w0, w1) of the table in the order of a (word w: a = 4w - 128 .. 4w - 125) to dst,
 * all between the runs (w0 >= the first word with an entry from p on, w1 <= the first word
 * of vl's run), from the table's edges p (first a with v != vf), r (first a of the run of
 * vl, p <= r) and s (where acc changes sign inside [p, r), else p or r): inner words of one
 * sign by mul_inner_words (v is strictly inside (lo, hi) there: no saturation or clamp); the
 * at most three words across an edge exact (mul_edge_word). */
TH_INLINE void mul_words(const th_nn_mono *q, int32_t w0, int32_t w1, uint32_t *dst, int32_t p,
                         int32_t s, int32_t r, uint32_t dm, uint32_t lo4, uint32_t hi4)
{
    /* words [wi0, wi1) lie inside [p, r), and word ws (if s is not its first entry) holds
     * both signs of acc */
    const int32_t wi0 = (p + 131) >> 2, wi1 = (r + 128) >> 2;
    const int32_t ws = ((s + 128) & 3) != 0 ? (s + 128) >> 2 : -1;
    const int32_t sb = (s + 131) >> 2; /* the first word from s on */
    int32_t w = w0;
    while (w < w1) {
        const int32_t a = 4 * w - 128;
        if (w >= wi0 && w < wi1 && w != ws) {
            /* clean words up to the next edge word (or the sign change, or the end) */
            int32_t end = wi1 < w1 ? wi1 : w1;
            const int32_t stop = ws >= 0 ? ws : sb;
            end = w < stop && stop < end ? stop : end;
            const int32_t acc = (int32_t)((uint32_t)q->c + (uint32_t)q->k * (uint32_t)a);
            mul_inner_words((uint32_t)acc, (uint32_t)q->k, q->m, acc < 0 ? q->rzp_neg : q->rzp,
                            q->e, dst, end - w);
            dst += end - w;
            w = end;
        } else {
            *dst++ = mul_edge_word(q, a, dm, lo4, hi4);
            w++;
        }
    }
}

/* v4 to the table's words [w0, w1) in the order of a (word w at lutw[(w + 32) % 64]). */
static void mul_run_words(uint32_t *lutw, int32_t w0, int32_t w1, uint32_t v4)
{
    while (w0 < w1) {
        const int32_t end = w0 < 32 && w1 > 32 ? 32 : w1;
        uint32_t *d = lutw + ((w0 + 32) & 63);
        int32_t cnt = end - w0;
        for (; cnt >= 4; cnt -= 4, d += 4) { /* four words a pass: the loop's cost a quarter */
            d[0] = v4;
            d[1] = v4;
            d[2] = v4;
            d[3] = v4;
        }
        for (; cnt > 0; cnt--) {
            *d++ = v4;
        }
        w0 = end;
    }
}

/* What a table buffer holds (mul_table): words [0, wp) (in the order of a) all vf4, words
 * [wr, 64) all vl4; wp = 0 and wr = 64 when nothing is known. A channel's table then writes
 * its runs only where the previous channel's table differs (the tables of one call share
 * most of their runs: same bounds, edges near each other). */
typedef struct {
    int32_t wp;
    int32_t wr;
    uint32_t vf4;
    uint32_t vl4;
} mul_tstate;

/* The whole table from its edges (see mul_words) into lutw, which holds st's table: the runs
 * written where st does not already hold them, the words between them computed; st then
 * describes the new table. */
__attribute__((noinline)) static void mul_table(const th_nn_mono *q, int32_t p, int32_t s,
                                                int32_t r, int32_t vf, int32_t vl,
                                                uint32_t *lutw, mul_tstate *st)
{
    const th_nn_mono qq = *q; /* in registers across the stores (see mul_edge_word) */
    const uint32_t vf4 = th_nn_splat4(vf), vl4 = th_nn_splat4(vl);
    const uint32_t dm = qq.rzp_neg != qq.rzp ? UINT32_C(0x80000000) : 0u;
    const uint32_t lo4 = th_nn_splat4(qq.lo), hi4 = th_nn_splat4(qq.hi);
    /* words before wp are all vf, from wr all vl */
    const int32_t wp = (p + 128) >> 2, wr = (r + 131) >> 2;
    int32_t kp = st->wp, kr = st->wr;
    if (st->vf4 != vf4 || st->vl4 != vl4) {
        kp = 0;
        kr = 64;
    }
    mul_run_words(lutw, kp, wp, vf4);
    mul_run_words(lutw, wr, kr, vl4);
    if (wp < 32) { /* a < 0: the table's second half */
        mul_words(&qq, wp, wr < 32 ? wr : 32, lutw + 32 + wp, p, s, r, dm, lo4, hi4);
    }
    if (wr > 32) {
        const int32_t w0 = wp > 32 ? wp : 32;
        mul_words(&qq, w0, wr, lutw + (w0 - 32), p, s, r, dm, lo4, hi4);
    }
    st->wp = wp;
    st->wr = wr;
    st->vf4 = vf4;
    st->vl4 = vl4;
}

/* A table buffer whose contents are unknown (mul_table writes every word). */
TH_INLINE void mul_tstate_none(mul_tstate *st)
{
    st->wp = 0;
    st->wr = 64;
    st->vf4 = 0;
    st->vl4 = 0;
}

/* The output table of x's int8 values (offset ox) times the factor f (the other input's value
 * plus its offset): the product p = (x + ox) * f, linear in x, is requantized as fast_rows
 * does (acc = p << sh, sh = 1 with th_fast_rq_apply2's sign term (fast), or shift + 1 with
 * none and e = 0 (left)); the edges by th_nn_mono_fill's binary searches on v (exact by
 * construction), the words by mul_table. */
__attribute__((noinline)) static void mul_fill(const mul_consts *k, int32_t f, int32_t ox,
                                               uint32_t *lutw)
{
    th_nn_mono q;
    mul_mono(k, f, ox, &q);
    const int32_t vf = th_nn_mono_v(&q, -128), vl = th_nn_mono_v(&q, 127);
    /* as th_nn_mono_fill: an end value strictly inside (lo, hi) has no run */
    const int sat_f = vf == q.lo || vf == q.hi, sat_l = vl == q.lo || vl == q.hi;
    const int32_t p = sat_f ? th_nn_mono_edge(&q, -128, 128, 0, vf) : -128;
    const int32_t r = p < 128 && sat_l ? th_nn_mono_edge(&q, p - 1, 127, 1, vl) : 128;
    const int neg = p < r && th_nn_mono_acc(&q, p) < 0;
    const int32_t s = p < r && q.rzp_neg != q.rzp ? th_nn_mono_edge(&q, p, r, 2, neg) : r;
    mul_tstate st;
    mul_tstate_none(&st);
    mul_table(&q, p, s, r, vf, vl, lutw, &st);
}

/* The first a in [-128, 128] with c + kk * a > t (kk > 0): floor((t - c) / kk) + 1, the
 * quotient clamped first so that it fits int32 and SDIV does it. */
TH_INLINE int32_t mul_first_gt(int32_t c, int32_t kk, int64_t t)
{
    const int64_t d = t - c, lim = (int64_t)kk * 129;
    if (d >= lim) {
        return 128;
    }
    if (d < -lim) {
        return -128;
    }
    const int32_t d32 = (int32_t)d;
    int32_t a = d32 / kk;
    a -= d32 < 0 && a * kk != d32; /* C's division truncates: floor */
    a += 1;
    return a < -128 ? -128 : a > 128 ? 128 : a;
}

/* mul_fill with the call's acc edges th (th_nn_mono_thresholds: v == lo iff acc <= alo, v ==
 * hi iff acc >= ahi): acc = c + k * a is linear in a, so each edge in a is one division
 * (mul_first_gt) where mul_fill searches with about 8 evaluations of v; mul_table writes the
 * words. k > 0: lo up to p, hi from r; k < 0: hi, then lo (the edges of -acc = -c + (-k) a);
 * k == 0: one value. */
__attribute__((noinline)) static void mul_fill_th(const th_nn_mono *q, const th_nn_mono_th *th,
                                                  uint32_t *lutw, mul_tstate *st)
{
    const int32_t kk = q->k, c = q->c;
    if (kk == 0) {
        th_nn_fill_bytes((int8_t *)lutw, 256, th_nn_mono_vacc(q, c));
        mul_tstate_none(st);
        return;
    }
    int32_t p, r, z;
    if (kk > 0) {
        p = mul_first_gt(c, kk, th->alo);
        r = mul_first_gt(c, kk, th->ahi - 1);
        z = mul_first_gt(c, kk, -1); /* the first acc >= 0 */
    } else {
        p = mul_first_gt(-c, -kk, -th->ahi);
        r = mul_first_gt(-c, -kk, -(th->alo + 1));
        z = mul_first_gt(-c, -kk, 0); /* the first acc < 0 */
    }
    r = r < p ? p : r;
    mul_table(q, p, z < p ? p : z > r ? r : z, r, kk > 0 ? q->lo : q->hi, kk > 0 ? q->hi : q->lo,
              lutw, st);
}

/* A bound of a table's inner entries (those mul_table computes, strictly inside (lo, hi)) for
 * the factor f: the output moves by |f| M 2^(shift - 31) per step of x (M the Q31
 * multiplier), so at most (hi - lo) / that + 2 entries are inside, and 256. m16 = M
 * 2^(shift - 15) (the step in Q16 per unit of |f|, truncated, at most 2^23: a larger step
 * leaves 2 entries anyway), q16 = (hi - lo) << 16. For the cost estimates that choose a
 * table only: not an exactness matter. */
TH_INLINE uint32_t mul_m16(const mul_consts *k)
{
    const int32_t sh = 15 - k->shift; /* in [-15, 46] */
    const uint32_t m = (uint32_t)k->multiplier, cap = UINT32_C(1) << 23;
    if (sh <= 0) {
        return m != 0 ? cap : 0; /* m << -sh >= 2^23 unless m is small: the cap is a bound */
    }
    const uint32_t m16 = sh < 32 ? m >> sh : 0;
    return m16 < cap ? m16 : cap;
}

/* About how many of the table's entries are inner (v strictly inside (lo, hi)) for the
 * factor f: v(x) is about zp + (x + ox) f m16 / 2^16 (m16: mul_m16), a line whose a-range
 * inside (lo, hi), clipped to the table's [-128, 127], is that count, plus 2 for the
 * rounding; 256 where the step is 0 in Q16. Counting where the line lies (not only its
 * slope) matters: zero points and the activation put much of a table in its saturated runs.
 * For the cost estimates that choose a table only: not an exactness matter. */
TH_INLINE uint32_t mul_inner_est(const mul_consts *k, uint32_t m16, int32_t ox, int32_t f)
{
    const int32_t s16 = f * (int32_t)m16; /* |.| < 255 * 2^23 < 2^31 */
    if (s16 == 0) {
        return 256;
    }
    /* the x where the line crosses lo and hi (|.| << 16 <= 255 << 16: inside int32) */
    int32_t x0 = (int32_t)((uint32_t)(k->act_min - k->out_offset) << 16) / s16 - ox;
    int32_t x1 = (int32_t)((uint32_t)(k->act_max - k->out_offset) << 16) / s16 - ox;
    if (x0 > x1) {
        const int32_t t = x0;
        x0 = x1;
        x1 = t;
    }
    x0 = x0 < -128 ? -128 : x0;
    x1 = x1 > 127 ? 127 : x1;
    return x1 < x0 ? 2u : (uint32_t)(x1 - x0) + 2u;
}

/* Measured costs (instructions, M4, times 10): a table (mul_table: a fixed part, the inner
 * entries at 4.5), an output of the broadcast rows (fast_rows' with a scalar, mul_chan's with
 * a channel row; by form: right shift (fast) or left, without or with the clamp), a
 * looked-up output (th_nn_lut_run and th_nn_lut_strided 3.5). */
#define TH_MUL_TABLE_FIXED10 4500 /* mul_fill_th + mul_table + a lut_column call */
#define TH_MUL_SEARCH_FIXED10 9500 /* mul_fill (its binary searches, mul_table), lut_run8's */
#define TH_MUL_INNER10 45 /* e > 15; 3.75 (mul_inner_words' left-shifted form) up to 15 */
#define TH_MUL_INNER10_LS 38
#define TH_MUL_THRESHOLDS10 4500 /* th_nn_mono_thresholds, once per channel call */
#define TH_MUL_CHAN_IMM10 70 /* an output of chanv_t's immediate-shift instances */
#define TH_MUL_SCALAR_IMM10 61 /* ... of spatial_t's, a scalar broadcast */

TH_INLINE int32_t mul_inner10(const mul_consts *k)
{
    return k->left || k->rq.e <= 15 ? TH_MUL_INNER10_LS : TH_MUL_INNER10;
}

TH_INLINE int32_t mul_row10(const mul_consts *k, int chan)
{
    const int clamp = k->act_min > -128 || k->act_max < 127;
    static const int8_t cost[2][2][2] = {{{75, 84}, {61, 66}}, {{93, 108}, {106, 115}}};
    if (!k->left && !clamp && k->rq.e >= 1 && k->rq.e <= TH_MUL_IMM_E) {
        /* the immediate-shift instances (chanv_imm, spatial_imm), two words a pass: chanv_t
         * 6.8 to 7.0 an output measured with the call's factor packing (sweep channel rows,
         * 10 to 62 columns), spatial_t as one pixel of a scalar's n 6.1 (n 256 to 640) */
        return chan ? TH_MUL_CHAN_IMM10 : TH_MUL_SCALAR_IMM10;
    }
    return cost[chan][k->left][clamp];
}

/* Scalar broadcast (s one element, x n elements): a 256-byte table of the output for every
 * int8 value (mul_fill), then one lut_run8 pass, where its estimated cost is below the
 * broadcast row's. Below mul_lut_min elements no table pays (TH_MUL_SEARCH_FIXED10 and 16
 * inner entries, about the fewest a table has, against the rows' saving, mul_row10 - 35 an
 * element): those calls are not worth the estimate, by [left][clamp]. */
TH_INLINE int32_t mul_lut_min(const mul_consts *k)
{
    const int clamp = k->act_min > -128 || k->act_max < 127;
    if (!k->left && !clamp && k->rq.e >= 1 && k->rq.e <= TH_MUL_IMM_E) {
        /* measured: the loop cheaper at n 400 (2,517 against 2,611 to 2,723), the table at
         * 512 (2,956 to 3,133 against 3,189 where the estimate takes it) */
        return 448;
    }
    return k->left ? (clamp ? 330 : 393) : (clamp ? 208 : 255);
}

/* An output of spatial_line_px (mul_px_run's 18 instructions a word of four), where the
 * host's line holds for the broadcast on `side` (th_mul_prep line) and the output clamps:
 * what the scalar table must beat there, so tables pay from about 1011 outputs. The paths
 * named where the estimate counts on them: a recording run (th_nn_paths.h) then keeps them,
 * so a pruned build estimates as the recording did and has the loop where data choose it. */
#define TH_MUL_PX10 45
/* An output of mul_chan_flat (20 a word, a run's and the pairs' set-up) */
#define TH_MUL_CF10 53
TH_INLINE int mul_line_px(const mul_consts *k, int32_t side)
{
    return k->line == side && (k->act_min > -128 || k->act_max < 127) &&
           TH_NN_PATH(MUL_SPATIAL_LINE) && TH_NN_PATH(MUL_SPATIAL_LINE_PX);
}

TH_INLINE int mul_lut_pays(const mul_consts *k, int px, int32_t f, int32_t ox, int32_t n)
{
    /* what the lookups save */
    const int32_t save = ((px ? TH_MUL_PX10 : mul_row10(k, 0)) - 35) * n;
    if (n >= 4096) { /* any table pays (and save stays inside int32) */
        return 1;
    }
    if (save <= TH_MUL_SEARCH_FIXED10) { /* no table pays */
        return 0;
    }
    const uint32_t w = mul_inner_est(k, mul_m16(k), ox, f);
    return TH_MUL_SEARCH_FIXED10 + mul_inner10(k) * (int32_t)w < save;
}

/* The scalar table's pass over x (th_nn_lut_run), out of line: its own registers. */
__attribute__((noinline)) static void lut_run8(const int8_t *lut, const int8_t *x, int32_t n,
                                               int8_t *out)
{
    th_nn_lut_run(lut, x, n, out);
}

/* 1 when done: the table paid (mul_lut_pays) and the outputs are written; else 0. */
__attribute__((noinline)) static int mul_lut(const mul_consts *k, int scalar1, const int8_t *s,
                                             const int8_t *x, int32_t n, int8_t *out)
{
    const int32_t f = s[0] + (scalar1 ? k->in1_offset : k->in2_offset);
    const int32_t ox = scalar1 ? k->in2_offset : k->in1_offset;
    if (!mul_lut_pays(k, mul_line_px(k, scalar1 ? 2 : 1), f, ox, n)) {
        return 0;
    }
    uint32_t lutw[64];
    mul_fill(k, f, ox, lutw);
    lut_run8((const int8_t *)lutw, x, n, out);
    return 1;
}

/* Channel broadcast through tables: [rows, n] (x) against one row y of n (y is input1 when
 * y1): channel j's outputs are a function of x alone, so per channel a 256-byte output table
 * (mul_fill_th: the edges by division from the call's acc thresholds) and one strided pass
 * down the column (3.5 instructions per output against about 10 on mul_chan); where the
 * estimated cost of the tables and passes is below mul_chan's. No tables pay below
 * TH_MUL_CHAN_LUT_ROWS rows (mul_chan's 9.3 an output against 3.5: 4500 / 58 = 78, less
 * where a clamp makes the rows dearer). */
#define TH_MUL_CHAN_LUT_ROWS 76
TH_INLINE int mul_chan_lut_pays(const mul_consts *k, int cf, const int8_t *y, int32_t oy,
                                int32_t ox, int32_t n, int32_t rows)
{
    /* in int32 for rows * n <= 2^31 / 115 (the rows' cost times 10): else tables pay */
    if (rows * (int64_t)n > 16000000) {
        return 1;
    }
    const int32_t save = ((cf ? TH_MUL_CF10 : mul_row10(k, 1)) - 35) * rows * n -
                         TH_MUL_THRESHOLDS10;
    if (save <= TH_MUL_TABLE_FIXED10 * n) {
        return 0;
    }
    /* the inner entries the tables may compute, as far as they still pay: at least 8 a
     * table (the edge words' entries, about), else no table pays and no estimate is made */
    const uint32_t room = (uint32_t)(save - TH_MUL_TABLE_FIXED10 * n) / (uint32_t)mul_inner10(k);
    if (room < 8u * (uint32_t)n) {
        return 0;
    }
    /* estimated from up to 8 channels spread over the row (the estimate's cost stays small
     * where it says no) */
    const uint32_t m16 = mul_m16(k);
    const int32_t step = (n + 7) >> 3;
    uint32_t inner = 0, seen = 0;
    for (int32_t j = 0; j < n; j += step, seen++) {
        inner += mul_inner_est(k, m16, ox, y[j] + oy);
    }
    return (uint64_t)inner * (uint32_t)n < (uint64_t)room * seen;
}

__attribute__((noinline)) static void lut_column(const int8_t *lut, const int8_t *x,
                                                 int32_t stride, int32_t count, int8_t *out)
{
    th_nn_lut_strided(lut, x, stride, count, out);
}

/* 1 when done (the tables paid: mul_chan_lut_pays, against mul_chan_flat's cost where cf),
 * else 0. */
__attribute__((noinline)) static int mul_chan_lut(const mul_consts *k, int cf, int y1,
                                                  const int8_t *y,
                                                  const int8_t *x, int32_t n, int32_t rows,
                                                  int8_t *out)
{
    const int32_t oy = y1 ? k->in1_offset : k->in2_offset;
    const int32_t ox = y1 ? k->in2_offset : k->in1_offset;
    if (!mul_chan_lut_pays(k, cf, y, oy, ox, n, rows)) {
        return 0;
    }
    uint32_t lutw[64];
    int8_t *lut = (int8_t *)lutw;
    th_nn_mono q;
    mul_mono(k, 0, ox, &q);
    /* every acc of the call: |(x + ox) (y + oy)| <= 255^2, shifted as mul_mono shifts */
    const int32_t amax = (int32_t)((uint32_t)(255 * 255) << (k->left ? k->shift + 1 : 1));
    const th_nn_mono_th th = th_nn_mono_thresholds(&q, -amax, amax);
    mul_tstate st; /* lutw holds the previous channel's table */
    mul_tstate_none(&st);
    /* the channels of a positive factor first, then the others: the runs' values (lo, hi)
     * swap with the factor's sign, so each pass shares them from table to table */
    for (int32_t neg = 0; neg < 2; neg++) {
        for (int32_t j = 0; j < n; j++) {
            const int32_t f = y[j] + oy;
            if ((f > 0) == (neg == 0)) {
                mul_mono(k, f, ox, &q);
                mul_fill_th(&q, &th, lutw, &st);
                lut_column(lut, x + j, n, rows, out + j);
            }
        }
    }
    return 1;
}
#endif

#if !TH_NN_MVE
/* The exact rows (any multiplier and shift), out of line: their own registers. */
__attribute__((noinline)) static void exact_row(const mul_consts *k, const int8_t *a,
                                                int32_t step_a, const int8_t *b,
                                                int32_t step_b, int32_t n, int8_t *out)
{
    mul_row_t(k, a, step_a, b, step_b, n, out, 0);
}

#endif

static void mul_row(const mul_consts *k, const int8_t *a, int32_t step_a, const int8_t *b,
                    int32_t step_b, int32_t n, int8_t *out)
{
#if TH_NN_MVE
    mve_row(k, a, step_a, b, step_b, n, out);
#else
#if TH_NN_HAS_DSP
    /* one factor y for the row on the side the host's line names (th_mul_prep line): one MLA
     * and the saturation an output */
    if (k->line != 0 && (k->line == 1 ? step_b == 0 && step_a != 0 : step_a == 0 && step_b != 0) &&
        TH_NN_PATH(MUL_ROW_LINE)) {
        const int y1 = k->line == 2;
        const int32_t oy = y1 ? k->in1_offset : k->in2_offset;
        const int32_t yv = y1 ? a[0] : b[0];
        const uint32_t la = (uint32_t)k->line_a;
        const int32_t m = (int32_t)((uint32_t)(yv + oy) * la +
                                    (UINT32_C(1) << (k->line_t - 1))) >> k->line_t;
        const int8_t *x = y1 ? b : a;
        const int clamp = k->act_min > -128 || k->act_max < 127;
        (clamp ? line_bcast_clamp : line_bcast)(k, x, y1 ? k->in2_offset : k->in1_offset, x, 0,
                                                m, n, out);
        return;
    }
    if ((k->fast || k->left) && (step_a != 0 || step_b != 0)) {
        const int clamp = k->act_min > -128 || k->act_max < 127;
        if (step_a != 0 && step_b != 0) {
            const row_fn row = k->left ? (clamp ? left_same_clamp : left_same)
                                       : (clamp ? fast_same_clamp : fast_same);
            row(k, a, k->in1_offset, b, k->in2_offset, 0, n, out);
        } else {
            const int32_t f = step_a == 0 ? a[0] + k->in1_offset : b[0] + k->in2_offset;
            const int8_t *x = step_a == 0 ? b : a;
            const int32_t ox = step_a == 0 ? k->in2_offset : k->in1_offset;
            const row_fn row = k->left ? (clamp ? left_bcast_clamp : left_bcast)
                                       : (clamp ? fast_bcast_clamp : fast_bcast);
            row(k, x, ox, x, 0, f, n, out);
        }
        return;
    }
    if (k->fast) {
        mul_row_t(k, a, step_a, b, step_b, n, out, 1);
        return;
    }
#endif
    exact_row(k, a, step_a, b, step_b, n, out);
#endif
}

/* th_mul_s8_prepare without the nosign proof (nosign 0): the generic entry's per-call fill. */
static th_status mul_prep_fill(const th_mul_params *params, const th_per_tensor_quant *quant,
                               const th_shape *input1_shape, const th_shape *input2_shape,
                               const th_shape *output_shape, th_mul_prep *prep)
{
    if (params == NULL || quant == NULL || prep == NULL ||
        !th_nn_bcast_init(&prep->walk, input1_shape, input2_shape, output_shape)) {
        return TH_ERR_ARG;
    }
    if (params->input1_offset < -127 || params->input1_offset > 128 ||
        params->input2_offset < -127 || params->input2_offset > 128 ||
        params->output_offset < -128 || params->output_offset > 127 ||
        !th_nn_activation_ok(&params->activation) || quant->multiplier < 0 ||
        quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    mul_consts *k = prep;
    k->in1_offset = params->input1_offset;
    k->in2_offset = params->input2_offset;
    k->multiplier = quant->multiplier;
    k->shift = quant->shift;
    k->out_offset = params->output_offset;
    k->act_min = params->activation.min;
    k->act_max = params->activation.max;
    /* the same in every build, so one host copy serves them all */
    k->fast = th_fast_rq_ok(k->multiplier, k->shift, 255 * 255);
    k->left = k->shift >= 0 && k->shift <= TH_MUL_MAX_LEFT;
    /* unused by the left rows and the exact path, but the clamped rows lower a copy
     * (th_nn_rq_less) before they know which form they take: a defined value */
    k->rq = (th_fast_rq){0, 0, 0};
    if (k->fast) {
        k->rq = th_fast_rq_make(k->multiplier, k->shift, k->out_offset);
    }
    k->nosign = 0;
    /* the line form is the host's proof alone (mul_line): not proven here */
    k->line = 0;
    k->line_a = 0;
    k->line_t = 0;
    k->line_k = 0;
    /* px follows the line: not chosen here */
    k->px = 0;
    for (size_t i = 0; i < sizeof k->px_w / sizeof k->px_w[0]; i++) {
        k->px_w[i] = 0;
    }
    /* sc: the host's choice alone, not chosen here */
    k->sc = 0;
    for (size_t i = 0; i < sizeof k->sc_w / sizeof k->sc_w[0]; i++) {
        k->sc_w[i] = 0;
    }
    return TH_OK;
}

/* th_mul_prep's nosign, as th_nn_add_sub_s8.c's nosign_of over the 65536 products
 * (x1 + offset1) * (x2 + offset2): the clamped output of th_fast_rq_apply without its sign
 * term equals the one with it for all (1), or at round_zp - 1 for all (2), else 0. Only
 * where fast (the right-shift rows that take th_fast_rq_apply). */
static int32_t mul_nosign_of(const mul_consts *k)
{
    if (!k->fast) {
        return 0;
    }
    int ok1 = 1, ok2 = 1;
    for (int32_t a = -128; a < 128 && (ok1 || ok2); a++) {
        for (int32_t b = -128; b < 128; b++) {
            const int64_t acc2 = 2 * (int64_t)((a + k->in1_offset) * (b + k->in2_offset));
            th_nn_nosign_pair(acc2, &k->rq, k->act_min, k->act_max, &ok1, &ok2);
        }
    }
    return ok1 ? 1 : (ok2 ? 2 : 0);
}

th_status th_mul_s8_prepare(const th_mul_params *params, const th_per_tensor_quant *quant,
                            const th_shape *input1_shape, const th_shape *input2_shape,
                            const th_shape *output_shape, th_mul_prep *prep)
{
    const th_status st = mul_prep_fill(params, quant, input1_shape, input2_shape, output_shape,
                                       prep);
    if (st == TH_OK) {
        prep->nosign = mul_nosign_of(prep);
    }
    return st;
}

th_status th_mul_s8_prepared(const th_mul_prep *k, const int8_t *input1, const int8_t *input2,
                             int8_t *output)
{
#if TH_NN_HAS_DSP && !TH_NN_MVE
    /* the host's choice (th_mul_prep px): the clamped line's pixel loop for the whole call,
     * its constants made on the host */
    if (k->px != 0 && TH_NN_PATH(MUL_SPATIAL_LINE_PX)) {
        const int y1 = k->px == 2;
        mul_px_run(y1 ? input2 : input1, output, y1 ? input1 : input2, k->px_w);
        return TH_OK;
    }
    /* the host's choice (th_mul_prep sc): the int8 scalar loop, where x and the output are
     * word-aligned (its LDM / STM) */
    if (k->sc != 0) {
        const int y1 = k->sc == 2;
        const int8_t *const x = y1 ? input2 : input1;
        const mul_sc_fn f = mul_sc_imm(k->rq.e);
        if (f != NULL && (((uintptr_t)x | (uintptr_t)output) & 3u) == 0) {
            f(x, output, y1 ? input1 : input2, k->sc_w);
            return TH_OK;
        }
    }
#endif
    const th_nn_bcast *b = &k->walk;
    const int32_t inner = b->dims[b->rank - 1];
    const int32_t rows = b->count / inner;
#if TH_NN_HAS_DSP && !TH_NN_MVE
    if ((k->fast || k->left) && (b->count1 == 1 || b->count2 == 1) &&
        /* 208: the least mul_lut_min, the cheaper test first */
        b->count >= 208 && b->count >= mul_lut_min(k) &&
        TH_NN_PATH(MUL_LUT)) {
        const int scalar1 = b->count1 == 1;
        /* the data choose between the table and the loop: a recording run keeps the loop's
         * immediate-shift instance too (spatial_imm; a no-op where the paths are constants) */
        if (k->line == 0 && !k->left && k->nosign == 0 && k->act_min == -128 &&
            k->act_max == 127) {
            (void)spatial_imm(k->rq.e);
        }
        if (mul_lut(k, scalar1, scalar1 ? input1 : input2, scalar1 ? input2 : input1, b->count,
                    output)) {
            return TH_OK;
        }
    }
    /* Channel broadcast: [rows, C] against [C] (either side). */
    if ((k->fast || k->left) && b->rank == 2 && rows > 1 && b->stride1[1] == 1 &&
        b->stride2[1] == 1 && (b->stride1[0] == 0 || b->stride2[0] == 0)) {
        const int bc1 = b->stride1[0] == 0;
        /* the data choose between the two: a recording run (th_nn_paths.h) keeps both, and
         * the loop's immediate-shift instance (chanv_imm), which mul_chan only names when it
         * runs (a no-op where the paths are constants) */
        (void)TH_NN_PATH(MUL_CHAN);
        if (k->line != (bc1 ? 2 : 1) && !k->left && k->act_min == -128 && k->act_max == 127) {
            (void)chanv_imm(k->rq.e);
        }
        /* the flat line, where it applies, against the tables (data choose: a recording run
         * keeps both) */
        const int cf = mul_cf_ok(k, bc1 ? 2 : 1, inner, rows) && TH_NN_PATH(MUL_CHAN_LINE_FLAT);
        if (rows >= TH_MUL_CHAN_LUT_ROWS && TH_NN_PATH(MUL_CHAN_LUT) &&
            mul_chan_lut(k, cf, bc1, bc1 ? input1 : input2, bc1 ? input2 : input1, inner, rows,
                         output)) {
            return TH_OK;
        }
        if (cf) {
            mul_chan_flat(k, bc1 ? input2 : input1, bc1 ? k->in2_offset : k->in1_offset,
                          bc1 ? input1 : input2, bc1 ? k->in1_offset : k->in2_offset, inner,
                          rows, output);
            return TH_OK;
        }
        const int line = k->line == (bc1 ? 2 : 1) && TH_NN_PATH(MUL_CHAN_LINE);
        if (mul_chan(k, bc1 ? input2 : input1, bc1 ? k->in2_offset : k->in1_offset,
                     bc1 ? input1 : input2, bc1 ? k->in1_offset : k->in2_offset, inner, rows,
                     output, line)) {
            return TH_OK;
        }
    }
    /* Spatial broadcast: [rows, C] against [rows, 1] (either side); a scalar broadcast
     * (below the table's, either side) as one pixel of count channels. */
    const int spatial = b->rank == 2 && rows > 1 && b->stride1[0] != 0 && b->stride2[0] != 0 &&
                        (b->stride1[1] == 0) != (b->stride2[1] == 0);
    if (spatial || b->count1 == 1 || b->count2 == 1) {
        const int bc1 = spatial ? b->stride1[1] == 0 : b->count1 == 1;
        const int32_t n = spatial ? inner : b->count, prow = spatial ? rows : 1;
        const int8_t *const x = bc1 ? input2 : input1, *const y = bc1 ? input1 : input2;
        const int32_t ox = bc1 ? k->in2_offset : k->in1_offset;
        const int32_t oy = bc1 ? k->in1_offset : k->in2_offset;
        const int clamp = k->act_min > -128 || k->act_max < 127;
        if (k->line == (bc1 ? 2 : 1) && TH_NN_PATH(MUL_SPATIAL_LINE)) {
            /* the host-proven line (th_mul_prep line): any multiplier and shift */
            if (clamp && n >= 4 && TH_NN_PATH(MUL_SPATIAL_LINE_PX)) {
                spatial_line_px(k, x, ox, y, oy, n, prow, output);
                return TH_OK;
            }
            (clamp ? spatial_line_clamp : spatial_line)(k, x, ox, y, oy, n, prow, output);
            return TH_OK;
        }
        if (k->fast || (k->left && k->shift <= TH_MUL_SPATIAL_MAX_LEFT)) {
            /* only the path picked is evaluated (a recording build notes each one evaluated) */
            const int ns = !k->left && k->nosign != 0 && TH_NN_PATH(MUL_SPATIAL_NS);
            /* with the sign term, unclamped: the immediate-shift instance where kept */
            const spatial_fn fi = !ns && !k->left && !clamp ? spatial_imm(k->rq.e) : NULL;
            const spatial_fn f = ns ? (clamp ? spatial_fast_clamp_ns : spatial_fast_ns)
                                 : fi != NULL ? fi
                                 : !TH_NN_PATH(MUL_SPATIAL) ? NULL
                                 : k->left ? (clamp ? spatial_left_clamp : spatial_left)
                                           : (clamp ? spatial_fast_clamp : spatial_fast);
            if (f != NULL) {
                f(k, x, ox, y, oy, n, prow, output);
                return TH_OK;
            }
        }
    }
#endif
    th_nn_bcast_pos pos;
    th_nn_bcast_start(&pos);
    for (int32_t r = 0; r < rows; r++) {
        mul_row(k, input1 + pos.off1, b->stride1[b->rank - 1], input2 + pos.off2,
                b->stride2[b->rank - 1], inner, output + r * inner);
        th_nn_bcast_next(b, &pos);
    }
    return TH_OK;
}

th_status th_mul_s8(const th_context *ctx, const th_mul_params *params,
                    const th_per_tensor_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    th_mul_prep k;
    if (input1 == NULL || input2 == NULL || output == NULL ||
        mul_prep_fill(params, quant, input1_shape, input2_shape, output_shape, &k) != TH_OK ||
        !th_nn_bcast_alias_ok(&k.walk, input1, input2, output)) {
        return TH_ERR_ARG;
    }
    return th_mul_s8_prepared(&k, input1, input2, output);
}
