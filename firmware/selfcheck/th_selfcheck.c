/*
 * Start-up known-answer checks (th_selfcheck.h). Each instruction's result is compared with a
 * plain C model of its Arm ARM definition on a few operand pairs chosen to hit the corner
 * cases (signed overflow, borrow, -128/127 bytes, 0x8000 halfwords); the GE-setting parallel
 * add/subtract instructions are checked through SEL, which is how the kernels use them.
 * Native builds run the instructions (inline asm / the kernels' own wrappers); host builds with
 * TH_NN_EMULATE_DSP check the kernels' C models the same way. Cortex-M55 builds also check the
 * Helium instructions (check_mve).
 *
 * TH_SELFCHECK_FORCE_FAIL=1 makes the SSUB8 check fail (host tests of the refusal path).
 */
#include "th_selfcheck.h"

#include <string.h>

#include "th_nn_support.h"

#ifndef TH_SELFCHECK_FORCE_FAIL
#define TH_SELFCHECK_FORCE_FAIL 0
#endif

static char verdict[96];

const char *th_selfcheck_verdict(void)
{
    return verdict;
}

#if TH_NN_HAS_DSP

static const uint32_t operands[][2] = {
    {0x7f80017fu, 0x807f7f01u}, /* the pair that exposed Renode's SSUB8: SEL -> 0x7f7f7f7f */
    {0x80008000u, 0x7fff0001u},
    {0x01ff7f80u, 0xff01807fu},
    {0x12345678u, 0x9abcdef0u},
    {0x00000000u, 0xffffffffu},
};
#define N_OPERANDS (sizeof operands / sizeof operands[0])

enum { K_SSUB8, K_SADD8, K_SSUB16, K_SADD16, K_USUB8, N_GE_OPS };

/* Reference: the op's result and its GE bits (bit i = byte lane i), Arm ARM A7.7. */
static uint32_t model_ge_op(int op, uint32_t a, uint32_t b, uint32_t *ge)
{
    uint32_t r = 0u;
    *ge = 0u;
    if (op == K_SSUB16 || op == K_SADD16) {
        for (int h = 0; h < 2; h++) {
            const int32_t x = (int16_t)(uint16_t)(a >> (16 * h));
            const int32_t y = (int16_t)(uint16_t)(b >> (16 * h));
            const int32_t v = op == K_SSUB16 ? x - y : x + y;
            r |= ((uint32_t)v & 0xffffu) << (16 * h);
            *ge |= v >= 0 ? 3u << (2 * h) : 0u;
        }
        return r;
    }
    for (int i = 0; i < 4; i++) {
        int32_t v;
        if (op == K_USUB8) {
            v = (int32_t)((a >> (8 * i)) & 0xffu) - (int32_t)((b >> (8 * i)) & 0xffu);
        } else {
            const int32_t x = (int8_t)(uint8_t)(a >> (8 * i));
            const int32_t y = (int8_t)(uint8_t)(b >> (8 * i));
            v = op == K_SSUB8 ? x - y : x + y;
        }
        r |= ((uint32_t)v & 0xffu) << (8 * i);
        *ge |= v >= 0 ? 1u << i : 0u;
    }
    return r;
}

static uint32_t model_sel(uint32_t ge, uint32_t a, uint32_t b)
{
    uint32_t r = 0u;
    for (int i = 0; i < 4; i++) {
        r |= (((ge >> i) & 1u) ? a : b) & (0xffu << (8 * i));
    }
    return r;
}

#if TH_NN_DSP_NATIVE
/* One asm block per op: SEL must see the GE flags the op just set. */
#define GE_SEL(insn, a, b, r, s)                                                               \
    __asm__(insn " %0, %2, %3\n\tsel %1, %2, %3" : "=&r"(r), "=&r"(s) : "r"(a), "r"(b) : "cc")

static void target_ge_op(int op, uint32_t a, uint32_t b, uint32_t *r, uint32_t *s)
{
    switch (op) {
    case K_SSUB8: GE_SEL("ssub8", a, b, *r, *s); break;
    case K_SADD8: GE_SEL("sadd8", a, b, *r, *s); break;
    case K_SSUB16: GE_SEL("ssub16", a, b, *r, *s); break;
    case K_SADD16: GE_SEL("sadd16", a, b, *r, *s); break;
    default: GE_SEL("usub8", a, b, *r, *s); break;
    }
}

static int32_t target_usat8(int32_t x)
{
    int32_t r;
    __asm__("usat %0, #8, %1" : "=r"(r) : "r"(x));
    return r;
}
#else
/* Host emulated-DSP build: the same models the emulated kernels use. */
static void target_ge_op(int op, uint32_t a, uint32_t b, uint32_t *r, uint32_t *s)
{
    uint32_t ge;
    *r = model_ge_op(op, a, b, &ge);
    *s = model_sel(ge, a, b);
}

static int32_t target_usat8(int32_t x)
{
    return x < 0 ? 0 : x > 255 ? 255 : x;
}
#endif

static void fail(const char *name)
{
    if (strstr(verdict, name) != NULL) {
        return;
    }
    size_t n = strlen(verdict);
    size_t m = strlen(name);
    if (n + m + 2 < sizeof verdict) {
        if (n > strlen("fail:")) {
            verdict[n++] = ',';
        }
        memcpy(verdict + n, name, m + 1);
    }
}

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
/* Helium (M55): the integer MVE instructions int8 kernels are built from, against their
 * Arm ARM definitions: VLDRB.S16 (widening load), VMLADAV.S8 (dot product across lanes),
 * VQRDMULH.S32 (rounding doubling high multiply, saturating only at INT32_MIN^2) and VRSHL.S32
 * (rounding shift by a signed amount). */
#include <arm_mve.h>

#if TH_NN_MVE
/* The kernels' vector requantization (th_mve_requantize) against the scalar statement of
 * TFLM's double rounding (th_requantize + offset + clamp) on 4096 x 4 pseudo-random
 * accumulators, multipliers, shifts (all of [-31, 30]), offsets and ranges, extremes mixed
 * in (INT32_MIN / INT32_MAX accumulators, multipliers 0, 2^30 and 2^31 - 1, ties). */
static uint32_t lcg(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state ^ (*state >> 15);
}

static void check_mve_requantize(uint32_t seed)
{
    uint32_t st = seed | 1u;
    for (unsigned it = 0; it < 4096; it++) {
        int32_t acc[4], mult[4], sh[4], got[4];
        const th_mve_out o = {(int32_t)(lcg(&st) % 256u) - 128, -128 + (int32_t)(it % 3u) * 64,
                              127 - (int32_t)(it % 5u) * 30};
        for (unsigned i = 0; i < 4; i++) {
            const uint32_t r = lcg(&st);
            sh[i] = (int32_t)(lcg(&st) % 62u) - 31;
            switch (r % 8u) {
            case 0: acc[i] = INT32_MIN; break;
            case 1: acc[i] = INT32_MAX; break;
            case 2: acc[i] = (int32_t)(lcg(&st) % 65536u) - 32768; break;
            case 3: /* an exact tie of the final shift */
                acc[i] = (int32_t)((lcg(&st) | 1u) << 12) >> 12;
                break;
            default: acc[i] = (int32_t)lcg(&st) >> (lcg(&st) % 31u); break;
            }
            switch ((r >> 8) % 6u) {
            case 0: mult[i] = 0; break;
            case 1: mult[i] = 1 << 30; break;
            case 2: mult[i] = INT32_MAX; break;
            default: mult[i] = (int32_t)(lcg(&st) >> 1); break;
            }
        }
        vst1q_s32(got, th_mve_requantize(vld1q_s32(acc), vld1q_s32(mult), vld1q_s32(sh), &o));
        for (unsigned i = 0; i < 4; i++) {
            const int32_t want = th_out_s8(th_requantize(acc[i], mult[i], sh[i]),
                                           o.output_offset, o.act_min, o.act_max);
            if (got[i] != want) {
                fail("MVE-RQ");
                return;
            }
        }
    }
}
#endif

static void check_mve(const uint32_t (*operand_table)[2], unsigned n)
{
    /* volatile: the compiler must not fold the checks at build time */
    const volatile uint32_t(*ops)[2] = operand_table;
    int8_t a8[16];
    int8_t b8[16];
    for (unsigned i = 0; i < 16; i++) {
        a8[i] = (int8_t)(uint8_t)(ops[i / 4 % n][0] >> (8 * (i % 4)));
        b8[i] = (int8_t)(uint8_t)(ops[(i / 4 + 1) % n][1] >> (8 * (i % 4)));
    }
    int32_t dot = 0;
    for (unsigned i = 0; i < 16; i++) {
        dot += a8[i] * b8[i];
    }
    if (vmladavq_s8(vld1q_s8(a8), vld1q_s8(b8)) != dot) {
        fail("VMLADAV");
    }
    int16_t wide[8];
    vst1q_s16(wide, vldrbq_s16(a8 + 8));
    for (unsigned i = 0; i < 8; i++) {
        if (wide[i] != a8[8 + i]) {
            fail("VLDRB");
        }
    }
    for (unsigned k = 0; k < n; k++) {
        int32_t x[4];
        int32_t y[4];
        int32_t sh[4];
        for (unsigned i = 0; i < 4; i++) {
            x[i] = (int32_t)ops[(k + i) % n][0];
            y[i] = (int32_t)ops[(k + i + 1) % n][1];
            sh[i] = (int32_t)(i * 7u + k) % 19 - 9; /* -9..9 */
        }
        x[3] = y[3] = INT32_MIN; /* the one saturating case */
        int32_t got[4];
        vst1q_s32(got, vqrdmulhq_s32(vld1q_s32(x), vld1q_s32(y)));
        for (unsigned i = 0; i < 4; i++) {
            const int64_t v = ((int64_t)x[i] * y[i] + (INT64_C(1) << 30)) >> 31;
            if (got[i] != (v > INT32_MAX ? INT32_MAX : (int32_t)v)) {
                fail("VQRDMULH");
            }
        }
        vst1q_s32(got, vrshlq_s32(vld1q_s32(x), vld1q_s32(sh)));
        for (unsigned i = 0; i < 4; i++) {
            const int64_t v = sh[i] >= 0
                                  ? (int64_t)(int32_t)((uint32_t)x[i] << sh[i])
                                  : ((int64_t)x[i] + (INT64_C(1) << (-sh[i] - 1))) >> -sh[i];
            if (got[i] != (int32_t)v) {
                fail("VRSHL");
            }
        }
    }
#if TH_NN_MVE
    check_mve_requantize(ops[0][0]);
#endif
}
#endif

static int32_t lo16(uint32_t x)
{
    return (int16_t)(uint16_t)x;
}

static int32_t hi16(uint32_t x)
{
    return (int16_t)(uint16_t)(x >> 16);
}

const char *th_selfcheck_run(void)
{
    static const char *const ge_names[N_GE_OPS] = {"SSUB8", "SADD8", "SSUB16", "SADD16", "USUB8"};
    strcpy(verdict, "fail:");
    for (unsigned k = 0; k < N_OPERANDS; k++) {
        /* volatile: the compiler must not fold the checks at build time */
        volatile uint32_t va = operands[k][0];
        volatile uint32_t vb = operands[k][1];
        const uint32_t a = va;
        const uint32_t b = vb;
        for (int op = 0; op < N_GE_OPS; op++) {
            uint32_t ge;
            uint32_t r;
            uint32_t s;
            const uint32_t want = model_ge_op(op, a, b, &ge);
            target_ge_op(op, a, b, &r, &s);
            if (TH_SELFCHECK_FORCE_FAIL && op == K_SSUB8) {
                s ^= 0xffu; /* as Renode 1.15.1 does on the first pair */
            }
            if (r != want || s != model_sel(ge, a, b)) {
                fail(ge_names[op]);
            }
        }
        const int32_t acc = (int32_t)(a ^ 0x5a5a5a5au);
        const int64_t dot = (int64_t)lo16(a) * lo16(b) + (int64_t)hi16(a) * hi16(b);
        if ((uint32_t)th_smlad((int32_t)a, (int32_t)b, acc) != (uint32_t)((int64_t)acc + dot)) {
            fail("SMLAD");
        }
        if ((uint32_t)th_smlabb((int32_t)a, (int32_t)b, acc) !=
            (uint32_t)((int64_t)acc + (int64_t)lo16(a) * lo16(b))) {
            fail("SMLABB");
        }
        const int64_t mm = (int64_t)(int32_t)a * (int32_t)b + ((int64_t)acc << 32) + 0x80000000ll;
        if ((uint32_t)th_smmlar((int32_t)a, (int32_t)b, acc) != (uint32_t)((uint64_t)mm >> 32)) {
            fail("SMMLAR");
        }
        const uint32_t sx = ((uint32_t)(int32_t)(int8_t)(uint8_t)a & 0xffffu) |
                            ((uint32_t)(int32_t)(int8_t)(uint8_t)(a >> 16) << 16);
        if ((uint32_t)th_sxtb16((int32_t)a) != sx) {
            fail("SXTB16");
        }
        if ((uint32_t)th_pkhbt((int32_t)a, (int32_t)b) != ((a & 0xffffu) | (b << 16))) {
            fail("PKHBT");
        }
        const int32_t x = (int32_t)a >> (int32_t)(k * 6u); /* large and small, both signs */
        const int32_t ss = x < -128 ? -128 : x > 127 ? 127 : x;
        const int32_t us = x < 0 ? 0 : x > 255 ? 255 : x;
        if (th_ssat8(x) != ss) {
            fail("SSAT");
        }
        if (target_usat8(x) != us) {
            fail("USAT");
        }
    }
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
    check_mve(operands, N_OPERANDS);
#endif
    if (strcmp(verdict, "fail:") == 0) {
        strcpy(verdict, "ok");
    }
    return verdict;
}

#else /* no DSP kernels in this build: nothing they rely on to check */

const char *th_selfcheck_run(void)
{
    strcpy(verdict, TH_SELFCHECK_FORCE_FAIL ? "fail:SSUB8" : "none");
    return verdict;
}

#endif
