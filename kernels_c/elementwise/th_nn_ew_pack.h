/* th_nn_ew_pack.h - private: four int8 results of an elementwise row stored as one word, and
 * the activation clamp done on the packed word (two SSUB8 + SEL pairs for four elements
 * instead of a compare pair each). */
#ifndef TH_NN_EW_PACK_H
#define TH_NN_EW_PACK_H

#include <stdint.h>

#include "th_nn_support.h"

/* One input pair of the nosign proofs (th_add_prep / th_mul_prep nosign), acc2 the doubled
 * accumulator: clears *ok1 where dropping the rounding's sign term changes the clamped output,
 * *ok2 where dropping it and lowering round_zp by one does. SMMLAR modelled in int64 as
 * round_zp + floor((acc2 * m + 2^31) / 2^32), the floors as arithmetic shifts. */
TH_INLINE void th_nn_nosign_pair(int64_t acc2, const th_fast_rq *rq, int32_t lo, int32_t hi,
                                 int *ok1, int *ok2)
{
    const int64_t y = rq->round_zp + ((acc2 * rq->multiplier + (INT64_C(1) << 31)) >> 32);
    const int32_t want = th_clamp((int32_t)((y + (acc2 < 0 ? -1 : 0)) >> rq->e), lo, hi);
    *ok1 = *ok1 && th_clamp((int32_t)(y >> rq->e), lo, hi) == want;
    *ok2 = *ok2 && th_clamp((int32_t)((y - 1) >> rq->e), lo, hi) == want;
}

/* Bytes 0..3 = the low bytes of v0..v3 (v1..v3 inserted with BFI). */
TH_INLINE uint32_t th_nn_pack4(int32_t v0, int32_t v1, int32_t v2, int32_t v3)
{
#if TH_NN_DSP_NATIVE
    uint32_t w = (uint32_t)v0;
    __asm__("bfi %0, %1, #8, #8\n\tbfi %0, %2, #16, #8\n\tbfi %0, %3, #24, #8"
            : "+r"(w)
            : "r"(v1), "r"(v2), "r"(v3));
    return w;
#else
    return ((uint32_t)v0 & 0xFFu) | (((uint32_t)v1 & 0xFFu) << 8) |
           (((uint32_t)v2 & 0xFFu) << 16) | ((uint32_t)v3 << 24);
#endif
}

/* Each signed byte of w raised to the matching byte of lo4 (hi: 0) or also lowered to that of
 * hi4 (hi: 1); lo4 and hi4 hold the bound in all four bytes. */
TH_INLINE uint32_t th_nn_clamp4(uint32_t w, uint32_t lo4, uint32_t hi4, int hi)
{
#if TH_NN_DSP_NATIVE
    uint32_t t;
    if (hi) {
        __asm__("ssub8 %1, %0, %2\n\tsel %0, %0, %2\n\tssub8 %1, %3, %0\n\tsel %0, %0, %3"
                : "+r"(w), "=&r"(t)
                : "r"(lo4), "r"(hi4)
                : "cc");
    } else {
        __asm__("ssub8 %1, %0, %2\n\tsel %0, %0, %2" : "+r"(w), "=&r"(t) : "r"(lo4) : "cc");
    }
    return w;
#else
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        int32_t v = (int8_t)(uint8_t)(w >> i);
        const int32_t l = (int8_t)(uint8_t)(lo4 >> i), h = (int8_t)(uint8_t)(hi4 >> i);
        v = v < l ? l : v;
        v = hi && v > h ? h : v;
        r |= ((uint32_t)v & 0xFFu) << i;
    }
    return r;
#endif
}

/* Products of the bottom and of the top signed halfwords (SMULBB, SMULTT). */
TH_INLINE int32_t th_nn_smulbb(int32_t a, int32_t b)
{
#if TH_NN_DSP_NATIVE
    int32_t r;
    __asm__("smulbb %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (int16_t)(uint16_t)((uint32_t)a & 0xFFFFu) *
           (int16_t)(uint16_t)((uint32_t)b & 0xFFFFu);
#endif
}

TH_INLINE int32_t th_nn_smultt(int32_t a, int32_t b)
{
#if TH_NN_DSP_NATIVE
    int32_t r;
    __asm__("smultt %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    return (int16_t)(uint16_t)((uint32_t)a >> 16) * (int16_t)(uint16_t)((uint32_t)b >> 16);
#endif
}

/* The bound v (-128..127) in all four bytes. */
TH_INLINE uint32_t th_nn_splat4(int32_t v)
{
    return ((uint32_t)v & 0xFFu) * UINT32_C(0x01010101);
}

/* v0..v3 packed, clamped (clamp: raised to lo4's bytes; hi: also lowered to hi4's), stored
 * at out as one word. */
TH_INLINE void th_nn_store4(int8_t *out, int32_t v0, int32_t v1, int32_t v2, int32_t v3,
                            int clamp, int hi, uint32_t lo4, uint32_t hi4)
{
    uint32_t w = th_nn_pack4(v0, v1, v2, v3);
    if (clamp) {
        w = th_nn_clamp4(w, lo4, hi4, hi);
    }
    th_write_s32(out, (int32_t)w);
}

/* Both activation bounds in two instructions per packed word (no scratch register), where
 * two SSUB8 + SEL pairs take four: with lo folded into the output zero point (th_nn_rq_less)
 * each result saturates unsigned (USAT to [0, 255]), u = clamp(v - lo, 0, 255), which is the
 * lower bound already. Per byte UQADD8 with 255 - (hi - lo) takes exactly the bytes with
 * u >= hi - lo to 255, and the wrapping UADD8 with hi + 1 then maps 255 to hi and any other u
 * to u + lo: clamp(v, lo, hi) as a signed byte. k4 / c4: those two constants in all bytes. */
TH_INLINE uint32_t th_nn_both_k4(int32_t lo, int32_t hi)
{
    return th_nn_splat4(255 - (hi - lo));
}

TH_INLINE uint32_t th_nn_both_c4(int32_t hi)
{
    return th_nn_splat4(hi + 1);
}

TH_INLINE int32_t th_nn_usat8(int32_t x)
{
#if TH_NN_DSP_NATIVE
    return (int32_t)__usat(x, 8);
#else
    return th_clamp(x, 0, 255);
#endif
}

/* u0..u3 (USAT results, see th_nn_both_k4) packed, taken to [lo, hi] and stored as a word. */
TH_INLINE void th_nn_store4u(int8_t *out, int32_t u0, int32_t u1, int32_t u2, int32_t u3,
                             uint32_t k4, uint32_t c4)
{
    uint32_t w = th_nn_pack4(u0, u1, u2, u3);
#if TH_NN_DSP_NATIVE
    __asm__("uqadd8 %0, %0, %1\n\tuadd8 %0, %0, %2" : "+r"(w) : "r"(k4), "r"(c4) : "cc");
#else
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        const uint32_t s = ((w >> i) & 0xFFu) + ((k4 >> i) & 0xFFu);
        r |= (((s > 255u ? 255u : s) + (c4 >> i)) & 0xFFu) << i;
    }
    w = r;
#endif
    th_write_s32(out, (int32_t)w);
}

/* Each signed halfword of w saturated to [0, 255] (USAT16 #8). */
TH_INLINE uint32_t th_nn_usat16_8(uint32_t w)
{
#if TH_NN_DSP_NATIVE
    __asm__("usat16 %0, #8, %0" : "+r"(w));
    return w;
#else
    const int32_t lo = (int16_t)(uint16_t)(w & 0xFFFFu), hi = (int16_t)(uint16_t)(w >> 16);
    return (uint32_t)th_clamp(lo, 0, 255) | ((uint32_t)th_clamp(hi, 0, 255) << 16);
#endif
}

/* The bytes of w plus those of k4, each modulo 256 (UADD8): USAT results u (see
 * th_nn_both_k4) raised back by lo in one instruction per word when only the lower bound
 * clamps (th_nn_add_sub_s8.c's separable rows). */
TH_INLINE uint32_t th_nn_uadd8(uint32_t w, uint32_t k4)
{
#if TH_NN_DSP_NATIVE
    __asm__("uadd8 %0, %0, %1" : "+r"(w) : "r"(k4) : "cc");
    return w;
#else
    return ((w & 0x7F7F7F7Fu) + (k4 & 0x7F7F7F7Fu)) ^ ((w ^ k4) & 0x80808080u);
#endif
}

/* th_nn_store4u's two instructions on a word already packed, the word returned
 * (th_nn_add_sub_s8.c's separable rows pack with USAT16). */
TH_INLINE uint32_t th_nn_both4u(uint32_t w, uint32_t k4, uint32_t c4)
{
#if TH_NN_DSP_NATIVE
    __asm__("uqadd8 %0, %0, %1\n\tuadd8 %0, %0, %2" : "+r"(w) : "r"(k4), "r"(c4) : "cc");
    return w;
#else
    uint32_t r = 0;
    for (int i = 0; i < 32; i += 8) {
        const uint32_t s = ((w >> i) & 0xFFu) + ((k4 >> i) & 0xFFu);
        r |= (((s > 255u ? 255u : s) + (c4 >> i)) & 0xFFu) << i;
    }
    return r;
#endif
}

/* One output from its USAT result u: clamp(v, lo, hi) = min(u, hi - lo) + lo. */
TH_INLINE int8_t th_nn_from_u(int32_t u, int32_t lo, int32_t hi)
{
    return (int8_t)((u > hi - lo ? hi - lo : u) + lo);
}

/* rq with the zero point lowered by lo (|zp - lo| <= 255 keeps SMMLAR's accumulator inside
 * int32 for e <= TH_FAST_MAX_E: 255 * 2^22 + 2^21 + 2^29 < 2^31), for th_nn_rq_apply2u. */
TH_INLINE th_fast_rq th_nn_rq_less(th_fast_rq rq, int32_t lo)
{
    rq.round_zp = (int32_t)((uint32_t)rq.round_zp - ((uint32_t)lo << rq.e));
    return rq;
}

#if TH_NN_HAS_DSP
/* th_fast_rq_apply2 saturated unsigned: with th_nn_rq_less's rq, clamp(v - lo, 0, 255). */
TH_INLINE int32_t th_nn_rq_apply2u(int32_t acc2, const th_fast_rq *rq)
{
    int32_t y = th_smmlar(acc2, rq->multiplier, rq->round_zp);
    y += acc2 >> 31;
    return th_nn_usat8(y >> rq->e);
}
#endif

/* The nt (n % 4) last outputs of a run without a loop (two, then one): V(j) is the value of
 * output j (clamped) from x[j]; each output is written after its inputs are read; x and out
 * end past them. */
#define TH_NN_EW_TAIL3(nt, x, out, V)                                                          \
    do {                                                                                       \
        if ((nt) & 2) {                                                                        \
            const int32_t v0_ = V(0);                                                          \
            (out)[1] = (int8_t)V(1);                                                           \
            (out)[0] = (int8_t)v0_;                                                            \
            (x) += 2;                                                                          \
            (out) += 2;                                                                        \
        }                                                                                      \
        if ((nt) & 1) {                                                                        \
            *(out)++ = (int8_t)V(0);                                                           \
            (x)++;                                                                             \
        }                                                                                      \
    } while (0)

/* w as 256 bytes holds 0..255 in order (the words are stored as th_nn_store4 stores). */
TH_INLINE void th_nn_lut_identity(uint32_t *w)
{
    uint32_t v = th_nn_pack4(0, 1, 2, 3);
    for (int32_t i = 0; i < 64; i++) {
        w[i] = v;
        v += UINT32_C(0x04040404);
    }
}

/* out[i * stride] = lut[(uint8_t)x[i * stride]] for i < count: one channel of a channel
 * broadcast through its output table. Eight elements a pass (a load, a lookup and a store
 * each, the pointer steps shared: 3.5 instructions an element against 4 with four); each
 * element is read before it is written, so out may be x (the in-place rule). Callers keep it
 * out of line (lut then stays in a register). */
TH_INLINE void th_nn_lut_strided(const int8_t *lut, const int8_t *x, int32_t stride,
                                 int32_t count, int8_t *out)
{
    const uint8_t *u = (const uint8_t *)x;
    const int32_t s2 = 2 * stride, s3 = 3 * stride, s4 = 4 * stride, s5 = 5 * stride;
    const int32_t s6 = 6 * stride, s7 = 7 * stride, s8 = 8 * stride;
    const uint8_t *const end8 = u + (count >> 3) * s8;
    while (u != end8) {
        out[0] = lut[u[0]];
        out[stride] = lut[u[stride]];
        out[s2] = lut[u[s2]];
        out[s3] = lut[u[s3]];
        out[s4] = lut[u[s4]];
        out[s5] = lut[u[s5]];
        out[s6] = lut[u[s6]];
        out[s7] = lut[u[s7]];
        u += s8;
        out += s8;
    }
    for (int32_t i = count & 7; i > 0; i--) {
        *out = lut[*u];
        u += stride;
        out += stride;
    }
}

/* out[i] = lut[(uint8_t)x[i]] for i < n: a scalar broadcast through its output table. Eight
 * elements a pass from two word loads, each byte looked up (UXTB with a rotation, LDRB) and
 * the four results packed (ORR with a shift) into one word store: 3.5 instructions an
 * element against th_lut_s8's 4 (four a pass, the loop's cost on four). Both words are read
 * before either is written, so out may be x (the in-place rule). Callers keep it out of line. */
TH_INLINE void th_nn_lut_run(const int8_t *lut, const int8_t *x, int32_t n, int8_t *out)
{
    const uint8_t *t = (const uint8_t *)lut;
    const int8_t *const end8 = x + (n & ~7);
#define TH_LUT_W(w)                                                                           \
    ((uint32_t)t[(w) & 0xFFu] | ((uint32_t)t[((w) >> 8) & 0xFFu] << 8) |                     \
     ((uint32_t)t[((w) >> 16) & 0xFFu] << 16) | ((uint32_t)t[(w) >> 24] << 24))
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* the same loop with x's post-increment the only pointer step (out = x + d: the stores
     * at x's register offsets d - 8 and d - 4), 28 instructions per 8 against 30 */
    if (x != end8) {
        const int32_t d = (int32_t)((uintptr_t)out - (uintptr_t)x);
        out += n & ~7;
        __asm__ volatile("1:\n\t"
                         "ldr r5, [%[x], #4]\n\t"
                         "ldr r4, [%[x]], #8\n\t"
                         "uxtb r6, r4\n\tldrb r6, [%[t], r6]\n\t"
                         "ubfx r7, r4, #8, #8\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r6, r6, r7, lsl #8\n\t"
                         "ubfx r7, r4, #16, #8\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r6, r6, r7, lsl #16\n\t"
                         "lsr r7, r4, #24\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r6, r6, r7, lsl #24\n\t"
                         "uxtb r4, r5\n\tldrb r4, [%[t], r4]\n\t"
                         "ubfx r7, r5, #8, #8\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r4, r4, r7, lsl #8\n\t"
                         "ubfx r7, r5, #16, #8\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r4, r4, r7, lsl #16\n\t"
                         "lsr r7, r5, #24\n\tldrb r7, [%[t], r7]\n\t"
                         "orr r4, r4, r7, lsl #24\n\t"
                         "str r6, [%[x], %[d8]]\n\t"
                         "str r4, [%[x], %[d4]]\n\t"
                         "cmp %[x], %[e]\n\t"
                         "bne 1b"
                         : [x] "+r"(x)
                         : [t] "r"(t), [e] "r"(end8), [d8] "r"(d - 8), [d4] "r"(d - 4)
                         : "r4", "r5", "r6", "r7", "cc", "memory");
    }
#else
    while (x != end8) {
        const uint32_t w0 = (uint32_t)th_read_s32(x), w1 = (uint32_t)th_read_s32(x + 4);
        const uint32_t r0 = TH_LUT_W(w0), r1 = TH_LUT_W(w1);
        th_write_s32(out, (int32_t)r0);
        th_write_s32(out + 4, (int32_t)r1);
        x += 8;
        out += 8;
    }
#endif
    if ((n & 4) != 0) {
        const uint32_t w0 = (uint32_t)th_read_s32(x);
        th_write_s32(out, (int32_t)TH_LUT_W(w0));
        x += 4;
        out += 4;
    }
#undef TH_LUT_W
    for (int32_t i = n & 3; i > 0; i--) {
        *out++ = (int8_t)t[(uint8_t)*x++];
    }
}

#if TH_NN_HAS_DSP
/* A 256-byte output table lut[(uint8_t)a] = v(a) of an elementwise op with one operand fixed
 * (a scalar, or one channel of a channel broadcast), for an output monotone in a:
 *     acc(a) = c + k * x(a),  x(a) = tab[(uint8_t)a] (an input's rescaling table) or a,
 *     v(a) = clamp(ssat8(SMMLAR(acc, m, acc < 0 ? rzp_neg : rzp) >> e), lo, hi)
 * with acc monotone in a (tab monotone, as scale_input's tables are) and m >= 0, so v is
 * monotone too. th_fast_rq_apply2 is this with rzp_neg = rzp - 1 (its "+ (acc >> 31)" moved
 * into SMMLAR's accumulator); MUL's left shifts with e = 0 and rzp_neg = rzp. Binary searches
 * find the run of v(-128) at the start and of v(127) at the end where that value is lo or hi
 * (saturated or clamped) and where acc changes sign; the runs are filled as bytes, and
 * between them v is inside int8 and the activation range (strictly between lo and hi): there
 * each entry is SMMLAR and a shift (no saturation, clamp or sign test). */
typedef struct {
    const int32_t *tab; /* NULL: x(a) = a */
    int32_t c;
    int32_t k;
    int32_t m;
    int32_t rzp;
    int32_t rzp_neg;
    int32_t e;
    int32_t lo;
    int32_t hi;
} th_nn_mono;

TH_INLINE int32_t th_nn_mono_acc(const th_nn_mono *q, int32_t a)
{
    const int32_t x = q->tab != NULL ? q->tab[(uint8_t)a] : a;
    return (int32_t)((uint32_t)q->c + (uint32_t)q->k * (uint32_t)x);
}

TH_INLINE int32_t th_nn_mono_vacc(const th_nn_mono *q, int32_t acc)
{
    const int32_t y = th_smmlar(acc, q->m, acc < 0 ? q->rzp_neg : q->rzp);
    return th_clamp(th_ssat8(y >> q->e), q->lo, q->hi);
}

TH_INLINE int32_t th_nn_mono_v(const th_nn_mono *q, int32_t a)
{
    return th_nn_mono_vacc(q, th_nn_mono_acc(q, a));
}

/* First a in (lo, hi) where the test fails (hi if none), the test holding at lo and
 * monotone: kind 0: v(a) == key, 1: v(a) != key, 2: (acc(a) < 0) == key. */
TH_INLINE int32_t th_nn_mono_edge(const th_nn_mono *q, int32_t lo, int32_t hi, int kind,
                                  int32_t key)
{
    while (hi - lo > 1) {
        const int32_t mid = lo + ((hi - lo) >> 1);
        const int ok = kind == 2 ? (th_nn_mono_acc(q, mid) < 0) == key
                       : kind == 0 ? th_nn_mono_v(q, mid) == key
                                   : th_nn_mono_v(q, mid) != key;
        if (ok) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

/* n bytes of v from p: words between the unaligned ends. */
TH_INLINE void th_nn_fill_bytes(int8_t *p, int32_t n, int32_t v)
{
    const uint32_t w = th_nn_splat4(v);
    for (; n > 0 && ((uintptr_t)p & 3u) != 0; n--) {
        *p++ = (int8_t)v;
    }
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
    /* 16 bytes a pass as two STRD of w twice (p is word aligned here): 4 instructions
     * against 16 for four word stores in the loop below (a table's saturated runs) */
    if (n >= 16) {
        const int8_t *const end = p + (n & ~15);
        __asm__ volatile("1:\n\t"
                         "strd %[w], %[w], [%[p]], #8\n\t"
                         "strd %[w], %[w], [%[p]], #8\n\t"
                         "cmp %[p], %[e]\n\t"
                         "bne 1b"
                         : [p] "+r"(p)
                         : [w] "r"(w), [e] "r"(end)
                         : "cc", "memory");
        n &= 15;
    }
#endif
    for (; n >= 4; n -= 4, p += 4) {
        th_write_s32(p, (int32_t)w);
    }
    for (; n > 0; n--) {
        *p++ = (int8_t)v;
    }
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* th_nn_mono_run's table loop for a multiple of four entries (t to t4): four a pass, one LDM
 * for their table words and the four bytes packed (BFI) into one word store, 19 instructions
 * against 24 (the table fill of the scalar and channel broadcasts is mostly this loop). Out
 * of line: the asm's four fixed registers and eight operands need the whole register file. */
static __attribute__((noinline, unused)) void th_nn_mono_run4(
    const int32_t *t, const int32_t *t4, int8_t *d, uint32_t c, uint32_t k, int32_t m,
    int32_t rzp, int32_t e)
{
    __asm__ volatile("1:\n\t"
                     "ldmia %[t]!, {r4, r5, r6, r7}\n\t"
                     "mla r4, r4, %[k], %[c]\n\tmla r5, r5, %[k], %[c]\n\t"
                     "mla r6, r6, %[k], %[c]\n\tmla r7, r7, %[k], %[c]\n\t"
                     "smmlar r4, r4, %[m], %[z]\n\tsmmlar r5, r5, %[m], %[z]\n\t"
                     "smmlar r6, r6, %[m], %[z]\n\tsmmlar r7, r7, %[m], %[z]\n\t"
                     "asr r4, r4, %[e]\n\tasr r5, r5, %[e]\n\t"
                     "asr r6, r6, %[e]\n\tasr r7, r7, %[e]\n\t"
                     "bfi r4, r5, #8, #8\n\tbfi r4, r6, #16, #8\n\tbfi r4, r7, #24, #8\n\t"
                     "str r4, [%[d]], #4\n\t"
                     "cmp %[t], %[t4]\n\t"
                     "bne 1b"
                     : [t] "+r"(t), [d] "+r"(d)
                     : [t4] "r"(t4), [k] "r"(k), [c] "r"(c), [m] "r"(m), [z] "r"(rzp), [e] "r"(e)
                     : "r4", "r5", "r6", "r7", "cc", "memory");
}
#endif

/* dst[i] = SMMLAR(acc, m, rzp) >> e for the n entries from a0 (acc of a0 + i), all of one
 * sign of a (contiguous in the table) and of acc. */
TH_INLINE void th_nn_mono_run(const th_nn_mono *q, int32_t a0, int32_t n, int32_t rzp,
                              int8_t *dst)
{
    const uint32_t c = (uint32_t)q->c, k = (uint32_t)q->k;
    const int32_t m = q->m, e = q->e;
    int32_t i = 0;
    if (q->tab != NULL) {
        const int32_t *t = q->tab + (uint8_t)a0;
#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
        if (n >= 4) {
            i = n & ~3;
            th_nn_mono_run4(t, t + i, dst, c, k, m, rzp, e);
        }
#endif
        for (; i + 4 <= n; i += 4) {
#define MONO_T(j) (int8_t)(th_smmlar((int32_t)(c + k * (uint32_t)t[i + j]), m, rzp) >> e)
            dst[i] = MONO_T(0);
            dst[i + 1] = MONO_T(1);
            dst[i + 2] = MONO_T(2);
            dst[i + 3] = MONO_T(3);
        }
        for (; i < n; i++) {
            dst[i] = MONO_T(0);
#undef MONO_T
        }
        return;
    }
    uint32_t acc = c + k * (uint32_t)a0;
    for (; i < n; i++, acc += k) {
        dst[i] = (int8_t)(th_smmlar((int32_t)acc, m, rzp) >> e);
    }
}

/* The table from its edges p (first a with v != vf), s (where acc changes sign, p <= s <= r)
 * and r (first a of the run of vl). Four ranges of a, in order: the run of v(-128), the
 * inner entries with acc of one sign, those of the other, the run of v(127); each range is
 * split where a changes sign (the table's two halves: lut + (uint8_t)a). */
TH_INLINE void th_nn_mono_cuts(const th_nn_mono *q, int8_t *lut, int32_t vf, int32_t vl,
                               int32_t p, int32_t s, int32_t r, int neg)
{
    const int32_t cut[5] = {-128, p, s, r, 128};
    for (int32_t h = 0; h < 4; h++) {
        const int32_t rzp = (h == 1) == (neg != 0) ? q->rzp_neg : q->rzp;
        for (int32_t a0 = cut[h], a1 = cut[h + 1]; a0 < a1;) {
            const int32_t end = a0 < 0 && a1 > 0 ? 0 : a1;
            int8_t *dst = lut + (uint8_t)a0;
            if (h == 0 || h == 3) {
                th_nn_fill_bytes(dst, end - a0, h == 0 ? vf : vl);
            } else {
                th_nn_mono_run(q, a0, end - a0, rzp, dst);
            }
            a0 = end;
        }
    }
}

/* The whole table (callers keep it out of line), its edges by binary searches on v. */
TH_INLINE void th_nn_mono_fill(const th_nn_mono *q, int8_t *lut)
{
    const int32_t vf = th_nn_mono_v(q, -128), vl = th_nn_mono_v(q, 127);
    /* An end value strictly inside (lo, hi) was neither saturated nor clamped, nor is any
     * entry of its run: no search for that run (the inner formula is exact there), which
     * keeps a table without saturation at two evaluations more than the plain loop. */
    const int sat_f = vf == q->lo || vf == q->hi, sat_l = vl == q->lo || vl == q->hi;
    /* first a with v != vf */
    const int32_t p = sat_f ? th_nn_mono_edge(q, -128, 128, 0, vf) : -128;
    /* first a with v == vl: v(p - 1) = vf != vl when p < 128 (p = -128: none before) */
    const int32_t r = p < 128 && sat_l ? th_nn_mono_edge(q, p - 1, 127, 1, vl) : 128;
    const int neg = p < r && th_nn_mono_acc(q, p) < 0;
    const int32_t s = p < r && q->rzp_neg != q->rzp ? th_nn_mono_edge(q, p, r, 2, neg) : r;
    th_nn_mono_cuts(q, lut, vf, vl, p, s, r, neg);
}

/* Edges in acc, the same for every table of one call (only c differs between channels):
 * alo = the largest acc in [amin, amax] with v(acc) == lo (amin - 1 if none), ahi = the
 * smallest with v(acc) == hi (amax + 1 if none), v being nondecreasing in acc (m >= 0) over
 * [amin, amax], the accumulators the call can reach (outside them SMMLAR's sum may wrap). Each
 * from the requantization's formula and checked (th_nn_mono_edge_acc), else by a search of
 * about 30 steps, once per call, after which each table's edges are searches on its table
 * words alone (th_nn_mono_tedge) or divisions (MUL's). */
typedef struct {
    int64_t alo;
    int64_t ahi;
} th_nn_mono_th;

/* floor(a / b) for b > 0 (C's division truncates). */
TH_INLINE int64_t th_nn_floordiv64(int64_t a, int64_t b)
{
    const int64_t d = a / b;
    return d - (a % b != 0 && a < 0);
}

/* The edges from the requantization's formula instead of a search: y = SMMLAR(acc, m, z) =
 * z + floor((acc m + 2^31) / 2^32) (z: rzp, or rzp_neg for acc < 0) and v == lo iff y >> e
 * <= lo iff y < (lo + 1) 2^e, i.e. acc m < (Y + 1 - z) 2^32 - 2^31 with Y = (lo + 1) 2^e - 1;
 * v == hi iff y >= hi 2^e, i.e. acc m >= (hi 2^e - z) 2^32 - 2^31. Each a division per sign
 * of acc (about 100 instructions in all against ~30 steps of ~15 for a search). The answer
 * is checked where it matters (v at the edge and next to it, the caller's bracket l < g <= h
 * or l <= g < h): 0 when it cannot be used (m <= 0, e > 21: the products leave int64, or
 * the check fails), and the caller searches. hi_edge: the smallest acc with v == hi, else
 * the largest with v == lo. */
TH_INLINE int th_nn_mono_edge_acc(const th_nn_mono *q, int32_t l, int32_t h, int hi_edge,
                                  int32_t *out)
{
    if (q->m <= 0 || q->e > 21 || q->e < 0) {
        return 0;
    }
    const int64_t m = q->m, half = INT64_C(1) << 31;
    int64_t g;
    if (!hi_edge) {
        const int64_t y1 = ((int64_t)q->lo + 1) * (INT64_C(1) << q->e); /* Y + 1 */
        /* the largest acc >= 0 with v == lo, else the largest negative one */
        const int64_t gp = th_nn_floordiv64((y1 - q->rzp) * (INT64_C(1) << 32) - half - 1, m);
        g = gp >= 0 ? gp
                    : th_nn_floordiv64((y1 - q->rzp_neg) * (INT64_C(1) << 32) - half - 1, m);
        g = gp < 0 && g > -1 ? -1 : g;
        g = g < l ? l : g >= h ? h - 1 : g;
        if (th_nn_mono_vacc(q, (int32_t)g) != q->lo ||
            th_nn_mono_vacc(q, (int32_t)g + 1) == q->lo) {
            return 0;
        }
    } else {
        const int64_t yh = (int64_t)q->hi * (INT64_C(1) << q->e); /* no shift of a negative */
        /* the smallest negative acc with v == hi, else the smallest acc >= 0 */
        const int64_t gn =
            -th_nn_floordiv64(-((yh - q->rzp_neg) * (INT64_C(1) << 32) - half), m); /* ceil */
        g = gn < 0 ? gn : -th_nn_floordiv64(-((yh - q->rzp) * (INT64_C(1) << 32) - half), m);
        g = gn >= 0 && g < 0 ? 0 : g;
        g = g <= l ? l + 1 : g > h ? h : g;
        if (th_nn_mono_vacc(q, (int32_t)g) != q->hi ||
            th_nn_mono_vacc(q, (int32_t)g - 1) == q->hi) {
            return 0;
        }
    }
    *out = (int32_t)g;
    return 1;
}

static __attribute__((noinline, unused)) th_nn_mono_th th_nn_mono_thresholds(const th_nn_mono *q,
                                                                          int32_t amin,
                                                                          int32_t amax)
{
    th_nn_mono_th th;
    int32_t l = amin, h = amax, g;
    if (th_nn_mono_vacc(q, l) != q->lo) {
        th.alo = (int64_t)amin - 1;
    } else if (th_nn_mono_vacc(q, h) == q->lo) {
        th.alo = amax;
    } else if (th_nn_mono_edge_acc(q, l, h, 0, &g)) {
        th.alo = g;
    } else {
        while ((uint32_t)h - (uint32_t)l > 1u) {
            const int32_t mid = (int32_t)((uint32_t)l + (((uint32_t)h - (uint32_t)l) >> 1));
            if (th_nn_mono_vacc(q, mid) == q->lo) {
                l = mid;
            } else {
                h = mid;
            }
        }
        th.alo = l;
    }
    l = amin;
    h = amax;
    if (th_nn_mono_vacc(q, h) != q->hi) {
        th.ahi = (int64_t)amax + 1;
    } else if (th_nn_mono_vacc(q, l) == q->hi) {
        th.ahi = amin;
    } else if (th_nn_mono_edge_acc(q, l, h, 1, &g)) {
        th.ahi = g;
    } else {
        while ((uint32_t)h - (uint32_t)l > 1u) {
            const int32_t mid = (int32_t)((uint32_t)l + (((uint32_t)h - (uint32_t)l) >> 1));
            if (th_nn_mono_vacc(q, mid) == q->hi) {
                h = mid;
            } else {
                l = mid;
            }
        }
        th.ahi = h;
    }
    return th;
}

/* First a in (lo, hi) where the test fails (hi if none), the test holding at lo: le ?
 * acc(a) <= A : acc(a) >= A, for acc = c + k * tab[a], k = +-2, tab nondecreasing in a.
 * As a test on the table word: t <= T or t >= T, the latter as ~t <= ~T (~ reverses the
 * order), so a step is a load, an EOR and a compare (against about 12 for v(a)). */
TH_INLINE int32_t th_nn_mono_tedge(const th_nn_mono *q, int32_t lo, int32_t hi, int le,
                                   int64_t a)
{
    const int64_t d = q->k > 0 ? a - q->c : (int64_t)q->c - a;
    int64_t t;
    int32_t f;
    if ((q->k > 0) == (le != 0)) {
        t = d >> 1; /* t <= floor(d / 2) */
        f = 0;
    } else {
        t = ((-d) >> 1) - 1; /* t >= ceil(d / 2): ~t <= ~ceil(d / 2) = floor(-d / 2) - 1 */
        f = -1;
    }
    if (t > INT32_MAX) {
        return hi;
    }
    if (t < INT32_MIN) {
        return lo + 1 < hi ? lo + 1 : hi;
    }
    const int32_t t32 = (int32_t)t;
#define TEDGE_OK(a) ((q->tab[(uint8_t)(a)] ^ f) <= t32)
    if (hi - lo > 4) {
        /* The table is a rescaling, close to linear in a: the edge guessed by interpolating
         * between the range's ends (two UDIVs), then the search narrowed to the guess and its
         * neighbour, about 30 instructions against 8 steps of 11. Exact either way: the test
         * decides. lo itself may lie outside the table (-129): not read. */
        const int32_t a0 = lo + 1, a1 = hi - 1;
        const uint32_t w0 = (uint32_t)(q->tab[(uint8_t)a0] ^ f) ^ UINT32_C(0x80000000);
        const uint32_t w1 = (uint32_t)(q->tab[(uint8_t)a1] ^ f) ^ UINT32_C(0x80000000);
        const uint32_t tu = (uint32_t)t32 ^ UINT32_C(0x80000000); /* order kept, unsigned */
        if (w0 > tu) {
            return a0;
        }
        if (w1 <= tu) {
            return hi;
        }
        /* holds at a0, fails at a1: w0 <= tu < w1 */
        lo = a0;
        hi = a1;
        const uint32_t slope = (w1 - w0) / (uint32_t)(a1 - a0);
        if (slope != 0) {
            int32_t g = a0 + (int32_t)((tu - w0) / slope < (uint32_t)(a1 - a0)
                                           ? (tu - w0) / slope
                                           : (uint32_t)(a1 - a0));
            g = g > lo ? g : lo + 1;
            if (g < hi) {
                if (TEDGE_OK(g)) {
                    lo = g;
                    if (g + 1 == hi || !TEDGE_OK(g + 1)) {
                        return g + 1;
                    }
                    lo = g + 1;
                } else {
                    hi = g;
                    if (g - 1 == lo || TEDGE_OK(g - 1)) {
                        return g;
                    }
                    hi = g - 1;
                }
            }
        }
    }
    while (hi - lo > 1) {
        const int32_t mid = lo + ((hi - lo) >> 1);
        if (TEDGE_OK(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
#undef TEDGE_OK
    return hi;
}

/* lut[(uint8_t)a] = v for a in [a0, a1): one or two byte runs (a's sign splits the table).
 * Out of line, as th_nn_mono_run_a: one copy of each loop. */
static __attribute__((noinline, unused)) void th_nn_mono_bytes_a(int8_t *lut, int32_t a0,
                                                                int32_t a1, int32_t v)
{
    while (a0 < a1) {
        const int32_t end = a0 < 0 && a1 > 0 ? 0 : a1;
        th_nn_fill_bytes(lut + (uint8_t)a0, end - a0, v);
        a0 = end;
    }
}

/* th_nn_mono_run over a in [a0, a1) (of one sign of acc), split where a changes sign. */
static __attribute__((noinline, unused)) void th_nn_mono_run_a(const th_nn_mono *q, int32_t a0,
                                                              int32_t a1, int32_t rzp,
                                                              int8_t *lut)
{
    while (a0 < a1) {
        const int32_t end = a0 < 0 && a1 > 0 ? 0 : a1;
        th_nn_mono_run(q, a0, end - a0, rzp, lut + (uint8_t)a0);
        a0 = end;
    }
}

/* What a table buffer holds for th_nn_mono_fill_th: vf over a in [-128, p), vl over
 * [r, 128) (p = -128, r = 128: nothing known). The tables of one channel call share their
 * run values and have their edges near each other, so a table writes its runs only where
 * the previous one's differ: a few bytes against about 200 written again per channel. */
typedef struct {
    int32_t p;
    int32_t r;
    int32_t vf;
    int32_t vl;
} th_nn_mono_runs;

/* A buffer whose contents are unknown (run values outside int8: never matched). */
TH_INLINE void th_nn_mono_runs_none(th_nn_mono_runs *st)
{
    st->p = -128;
    st->r = 128;
    st->vf = 256;
    st->vl = 256;
}

/* th_nn_mono_fill for tab != NULL and k = +-2 with the call's thresholds: the same edges
 * (v == lo iff acc <= alo, v == hi iff acc >= ahi), found on the table words; lut holds st's
 * table (th_nn_mono_runs), and st then describes the new one. */
TH_INLINE void th_nn_mono_fill_th(const th_nn_mono *q, const th_nn_mono_th *th, int8_t *lut,
                                  th_nn_mono_runs *st)
{
    const int32_t vf = th_nn_mono_v(q, -128), vl = th_nn_mono_v(q, 127);
    const int sat_f = vf == q->lo || vf == q->hi, sat_l = vl == q->lo || vl == q->hi;
    const int32_t p = !sat_f          ? -128
                      : vf == q->lo ? th_nn_mono_tedge(q, -128, 128, 1, th->alo)
                                    : th_nn_mono_tedge(q, -128, 128, 0, th->ahi);
    const int32_t r = !(p < 128 && sat_l) ? 128
                      : vl == q->hi       ? th_nn_mono_tedge(q, p - 1, 127, 1, th->ahi - 1)
                                          : th_nn_mono_tedge(q, p - 1, 127, 0, th->alo + 1);
    const int neg = p < r && th_nn_mono_acc(q, p) < 0;
    const int32_t s = p < r && q->rzp_neg != q->rzp ? th_nn_mono_tedge(q, p, r, neg, neg ? -1 : 0)
                                                     : r;
    /* the four ranges written out (a run of vf, the computed runs of either rzp, a run of
     * vl; the runs split where a changes sign), their bounds in registers */
    const int32_t rz1 = neg ? q->rzp_neg : q->rzp, rz2 = neg ? q->rzp : q->rzp_neg;
    /* vf is already over [-128, kp) and vl over [kr, 128) (kp <= kr); [p, r) is computed */
    const int32_t kp = st->vf == vf ? st->p : -128, kr = st->vl == vl ? st->r : 128;
    th_nn_mono_bytes_a(lut, kp, p, vf);
    th_nn_mono_run_a(q, p, s, rz1, lut);
    th_nn_mono_run_a(q, s, r, rz2, lut);
    th_nn_mono_bytes_a(lut, r, kr, vl);
    st->p = p;
    st->r = r;
    st->vf = vf;
    st->vl = vl;
}
#endif

#endif /* TH_NN_EW_PACK_H */
