/* th_nn_ew_pack.h - private: four int8 results of an elementwise row stored as one word, and
 * the activation clamp done on the packed word (two SSUB8 + SEL pairs for four elements
 * instead of a compare pair each). */
#ifndef TH_NN_EW_PACK_H
#define TH_NN_EW_PACK_H

#include <stdint.h>

#include "th_nn_support.h"

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
 * broadcast through its output table. Four reads before their four writes, so out may be x
 * (the in-place rule). Callers keep it out of line (lut then stays in a register). */
TH_INLINE void th_nn_lut_strided(const int8_t *lut, const int8_t *x, int32_t stride,
                                 int32_t count, int8_t *out)
{
    const uint8_t *u = (const uint8_t *)x;
    const int32_t s2 = 2 * stride, s3 = 3 * stride, s4 = 4 * stride;
    const uint8_t *const end4 = u + (count >> 2) * s4;
    while (u != end4) {
        const uint8_t x0 = u[0], x1 = u[stride], x2 = u[s2], x3 = u[s3];
        out[0] = lut[x0];
        out[stride] = lut[x1];
        out[s2] = lut[x2];
        out[s3] = lut[x3];
        u += s4;
        out += s4;
    }
    for (int32_t i = count & 3; i > 0; i--) {
        *out = lut[*u];
        u += stride;
        out += stride;
    }
}

#endif /* TH_NN_EW_PACK_H */
