/* th_logistic_s16 / th_tanh_s16: int16 LOGISTIC and TANH as TFLite Micro's
 * reference_integer_ops (zero points 0, output 2^-15): each input rescaled by Prepare's
 * (multiplier, left_shift) -- multiplier 0 is the power-of-two case, 3 << left_shift with no
 * shift -- then the host's 256-entry sigmoid table interpolated (th_nn_sigmoid16.h). */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_sigmoid16.h"
#include "th_nn_support.h"

typedef int16_t (*th_sigmoid16_fn)(int32_t v, const uint16_t *table);

TH_INLINE th_status run(const th_per_tensor_quant *quant, const uint16_t *table, int32_t size,
                        const int16_t *input, int16_t *output, th_sigmoid16_fn f)
{
    if (quant == NULL || table == NULL || input == NULL || output == NULL || size < 0 ||
        quant->multiplier < 0 || quant->shift < 0 || quant->shift > 31 ||
        (quant->multiplier == 0 && quant->shift > 13)) {
        return TH_ERR_ARG;
    }
    int32_t multiplier = quant->multiplier, shift = quant->shift;
    if (multiplier == 0) {
        multiplier = 3 << shift;
        shift = 0;
    }
    /* Element i is read before it is written: output == input is allowed. */
    for (int32_t i = 0; i < size; i++) {
        output[i] = f(th_sigmoid16_scale(input[i], multiplier, shift), table);
    }
    return TH_OK;
}

th_status th_logistic_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                          const uint16_t *table, int32_t size, const int16_t *input,
                          int16_t *output)
{
    (void)ctx;
    return run(quant, table, size, input, output, th_sigmoid16);
}

th_status th_tanh_s16(const th_context *ctx, const th_per_tensor_quant *quant,
                      const uint16_t *table, int32_t size, const int16_t *input,
                      int16_t *output)
{
    (void)ctx;
    return run(quant, table, size, input, output, th_tanh16);
}
