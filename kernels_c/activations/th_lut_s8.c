/* th_lut_s8: any unary int8 -> int8 function as a 256-entry table lookup. The host fills
 * the table from the NumPy reference (tinyhost.arith.lut), so LOGISTIC, TANH, HARD_SWISH,
 * LEAKY_RELU, RELU, RELU6 and int8 requantization are exact by construction. In place is
 * allowed (each output is written after its input is read). MVE builds: 16 lookups per
 * VLDRB gather (byte offsets = the input bytes as unsigned), the tail predicated. */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_support.h"

th_status th_lut_s8(const th_context *ctx, const int8_t *table, int32_t size,
                    const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (table == NULL || input == NULL || output == NULL || size < 0) {
        return TH_ERR_ARG;
    }
    int32_t i = 0;
#if TH_NN_MVE
    const uint8_t *t = (const uint8_t *)table;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (; i + 16 <= size; i += 16) {
        vstrbq_u8(out + i, vldrbq_gather_offset_u8(t, vldrbq_u8(in + i)));
    }
    if (i < size) {
        const mve_pred16_t p = vctp8q((uint32_t)(size - i));
        vstrbq_p_u8(out + i, vldrbq_gather_offset_z_u8(t, vldrbq_z_u8(in + i, p), p), p);
    }
    return TH_OK;
#endif
    /* four at a time through a word: one load and one store per four elements */
    for (; i + 4 <= size; i += 4) {
        uint32_t w;
        memcpy(&w, input + i, 4);
        const uint32_t r = (uint32_t)(uint8_t)table[w & 0xFFu] |
                           ((uint32_t)(uint8_t)table[(w >> 8) & 0xFFu] << 8) |
                           ((uint32_t)(uint8_t)table[(w >> 16) & 0xFFu] << 16) |
                           ((uint32_t)(uint8_t)table[w >> 24] << 24);
        memcpy(output + i, &r, 4);
    }
    for (; i < size; i++) {
        output[i] = table[(uint8_t)input[i]];
    }
    return TH_OK;
}
