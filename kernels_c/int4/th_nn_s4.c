/* th_nn_s4: the dot product core of the packed int4 kernels (th_nn_s4.h). */
#include <stddef.h>

#include "th_nn_s4.h"

#if TH_NN_HAS_DSP
/* Four int16 pairs of eight packed weights (times 16) against four staged words. */
TH_INLINE int32_t s4_group(int32_t w, const int32_t *c, int32_t acc)
{
    const int32_t lo = (int32_t)(((uint32_t)w << 4) & 0xF0F0F0F0u); /* n0 n2 n4 n6 */
    const int32_t hi = (int32_t)((uint32_t)w & 0xF0F0F0F0u);        /* n1 n3 n5 n7 */
    acc = th_smlad(th_sxtb16(lo), c[0], acc);                       /* (n0, n4) (x0, x4) */
    acc = th_smlad(th_sxtb16_ror8(lo), c[1], acc);                  /* (n2, n6) (x2, x6) */
    acc = th_smlad(th_sxtb16(hi), c[2], acc);                       /* (n1, n5) (x1, x5) */
    return th_smlad(th_sxtb16_ror8(hi), c[3], acc);                 /* (n3, n7) (x3, x7) */
}

void th_nn_s4_dot(const int16_t *col, const uint8_t *row_a, const uint8_t *row_b, int32_t kp,
                  int32_t *acc_a, int32_t *acc_b)
{
    const int32_t groups = kp >> 3;
    int32_t a = 0, b = 0;
    int32_t c[4];
    if (row_b != NULL) {
        for (int32_t g = 0; g < groups; g++) {
            memcpy(c, col + 8 * g, sizeof c);
            a = s4_group(th_read_s32(row_a + 4 * g), c, a);
            b = s4_group(th_read_s32(row_b + 4 * g), c, b);
        }
        *acc_b = b >> 4;
    } else {
        for (int32_t g = 0; g < groups; g++) {
            memcpy(c, col + 8 * g, sizeof c);
            a = s4_group(th_read_s32(row_a + 4 * g), c, a);
        }
    }
    *acc_a = a >> 4;
}
#else
static int32_t s4_row(const int16_t *col, const uint8_t *row, int32_t kp)
{
    int32_t acc = 0;
    for (int32_t k = 0; k < kp; k += 2) {
        const int32_t byte = row[k >> 1];
        const int32_t even = ((byte & 0xF) ^ 8) - 8;
        const int32_t odd = ((byte >> 4) ^ 8) - 8;
        acc += even * col[th_s4_slot(k)] + odd * col[th_s4_slot(k + 1)];
    }
    return acc;
}

void th_nn_s4_dot(const int16_t *col, const uint8_t *row_a, const uint8_t *row_b, int32_t kp,
                  int32_t *acc_a, int32_t *acc_b)
{
    *acc_a = s4_row(col, row_a, kp);
    if (row_b != NULL) {
        *acc_b = s4_row(col, row_b, kp);
    }
}
#endif
