/* th_nn_add_sub_s8.h - private: the shared core of th_add_s8 and th_sub_s8. */
#ifndef TH_NN_ADD_SUB_S8_H
#define TH_NN_ADD_SUB_S8_H

#include <stddef.h>

#include "th_nn.h"
#include "th_nn_broadcast.h"

/* subtract == 0: input1 + input2; otherwise input1 - input2. A table NULL: that input is
 * rescaled per element. */
th_status th_nn_add_sub_s8(const th_add_params *params, const th_add_quant *quant,
                           const int32_t *input1_table, const int32_t *input2_table,
                           const th_shape *input1_shape, const int8_t *input1,
                           const th_shape *input2_shape, const int8_t *input2,
                           const th_shape *output_shape, int8_t *output, int subtract);

#if TH_NN_MVE
/* The Helium body (th_nn_add_sub_mve_s8.c): arguments already checked by th_nn_add_sub_s8,
 * b their broadcast walk. */
void th_nn_add_sub_mve_s8(const th_add_params *params, const th_add_quant *quant,
                          const int32_t *input1_table, const int32_t *input2_table,
                          const th_nn_bcast *b, const int8_t *input1, const int8_t *input2,
                          int8_t *output, int subtract);
#endif

#endif /* TH_NN_ADD_SUB_S8_H */
