/* th_lut_s8: any unary int8 -> int8 function as a 256-entry table lookup. The host fills
 * the table from the NumPy reference (tinyhost.arith.lut), so LOGISTIC, TANH, HARD_SWISH,
 * LEAKY_RELU, RELU, RELU6 and int8 requantization are exact by construction. In place is
 * allowed (each output is written after its input is read). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"

th_status th_lut_s8(const th_context *ctx, const int8_t *table, int32_t size,
                    const int8_t *input, int8_t *output)
{
    (void)ctx;
    if (table == NULL || input == NULL || output == NULL || size < 0) {
        return TH_ERR_ARG;
    }
    int32_t i = 0;
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
