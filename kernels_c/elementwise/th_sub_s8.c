/* th_sub_s8: int8 SUB (input1 - input2) with broadcasting (see th_nn_add_sub_s8.c). */
#include "th_nn_add_sub_s8.h"

th_status th_sub_s8(const th_context *ctx, const th_add_params *params,
                    const th_add_quant *quant, const th_shape *input1_shape,
                    const int8_t *input1, const th_shape *input2_shape, const int8_t *input2,
                    const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    return th_nn_add_sub_s8(params, quant, NULL, NULL, input1_shape, input1, input2_shape,
                            input2, output_shape, output, 1);
}

th_status th_sub_s8_tables(const th_context *ctx, const th_add_params *params,
                           const th_add_quant *quant, const int32_t *input1_table,
                           const int32_t *input2_table, const th_shape *input1_shape,
                           const int8_t *input1, const th_shape *input2_shape,
                           const int8_t *input2, const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    return th_nn_add_sub_s8(params, quant, input1_table, input2_table, input1_shape, input1,
                            input2_shape, input2, output_shape, output, 1);
}
