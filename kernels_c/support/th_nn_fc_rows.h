/* th_nn_fc_rows.h - what the FULLY_CONNECTED row loops share (th_nn_fc_s8.c: int8 weights,
 * th_nn_fc_s16w.c: the host's int16 weights): one assembly loop over a row's blocks of four
 * channels, its state in a frame on the stack read through memory operands. */
#ifndef TH_NN_FC_ROWS_H
#define TH_NN_FC_ROWS_H

#include "th_nn_support.h"

/* A byte four times (the clamp's SSUB8 / SEL lanes). */
TH_INLINE uint32_t th_nn_bytes4(int32_t v)
{
    return ((uint32_t)v & 0xFFu) * 0x01010101u;
}

#if TH_NN_DSP_NATIVE && defined(__OPTIMIZE__)
/* th_fast_rq_apply of accumulator operand A (per tensor): registers M, RZ, E hold the
 * multiplier, round_zp and e; operand xa is a temporary. */
#define TH_NN_ROWS_RQ1(A, M, RZ, E)                                                          \
    TH_NN_ROWS_RQ_MUL(A, M, RZ, E, "lsl %[xa], %[" A "], #1\n\t")                           \
    "ssat %[" A "], #8, %[" A "]\n\t"
/* The same before its SSAT, 2 * acc made by DOUBLE (LSL, or QADD: Q set when |2 acc| does
 * not fit, the path FC_SHORT's bound). */
#define TH_NN_ROWS_RQ_MUL(A, M, RZ, E, DOUBLE)                                               \
    DOUBLE                                                                                   \
    "smmlar %[" A "], %[xa], %[" M "], %[" RZ "]\n\t"                                       \
    "add %[" A "], %[" A "], %[xa], asr #31\n\t"                                            \
    "asr %[" A "], %[" A "], %[" E "]\n\t"

/* The four outputs a0..a3 (SSAT'd) packed into a0, clamped bytewise (SSUB8 sets a lane's GE
 * bit where the first operand is the larger or equal, SEL picks by them: max with the
 * frame's lo4, then min with hi4, read by LDRD from operand lo) and stored as one word
 * through the frame's out pointer (operand out, written back); xa, xb, n, x temporaries. */
#define TH_NN_ROWS_STORE TH_NN_ROWS_PACK TH_NN_ROWS_CLAMP TH_NN_ROWS_PUT
/* The bytewise clamp of the packed a0 alone (xa, xb, n temporaries). */
#define TH_NN_ROWS_CLAMP TH_NN_ROWS_CLAMP_T("n")
/* The same with T for n (SSUB8's result, only its GE bits read). */
#define TH_NN_ROWS_CLAMP_T(T)                                                                \
    "ldrd %[xa], %[xb], %[lo]\n\t"                                                          \
    "ssub8 %[" T "], %[a0], %[xa]\n\t"                                                      \
    "sel %[a0], %[a0], %[xa]\n\t"                                                           \
    "ssub8 %[" T "], %[xb], %[a0]\n\t"                                                      \
    "sel %[a0], %[a0], %[xb]\n\t"
#define TH_NN_ROWS_PACK                                                                      \
    "bfi %[a0], %[a1], #8, #8\n\t"                                                          \
    "bfi %[a0], %[a2], #16, #8\n\t"                                                         \
    "bfi %[a0], %[a3], #24, #8\n\t"
#define TH_NN_ROWS_PUT                                                                       \
    "ldr %[x], %[out]\n\t"                                                                  \
    "str %[a0], [%[x]], #4\n\t"                                                             \
    "str %[x], %[out]\n\t"

/* Eight words in r4-r11, in this order (an LDM or STM of all eight moves them in order). */
#define TH_NN_REGS_R4_R11(A, B, C, D, E, F, G, H)                                            \
    register int32_t A __asm__("r4");                                                        \
    register int32_t B __asm__("r5");                                                        \
    register int32_t C __asm__("r6");                                                        \
    register int32_t D __asm__("r7");                                                        \
    register int32_t E __asm__("r8");                                                        \
    register int32_t F __asm__("r9");                                                        \
    register int32_t G __asm__("r10");                                                       \
    register int32_t H __asm__("r11")

/* The row loops' registers: accumulators r0-r3, four weight words r8-r11 (LDM order: W2, W3
 * name the last two), temporaries (X: the input pointer's). */
#define TH_NN_ROWS_REGS(W2, W3, X)                                                            \
    register int32_t a0 __asm__("r0");                                                       \
    register int32_t a1 __asm__("r1");                                                       \
    register int32_t a2 __asm__("r2");                                                       \
    register int32_t a3 __asm__("r3");                                                       \
    register int32_t w0 __asm__("r8");                                                       \
    register int32_t w1 __asm__("r9");                                                       \
    register int32_t W2 __asm__("r10");                                                      \
    register int32_t W3 __asm__("r11");                                                      \
    const int8_t *X;                                                                         \
    int32_t n;                                                                               \
    int32_t xa;                                                                              \
    int32_t xb
#endif

#endif
