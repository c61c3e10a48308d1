/*
 * ops_copy.c - RESHAPE and SQUEEZE (kernel id 9): the output holds the input's bytes.
 * The planner usually aliases the two buffers (then this is a no-op); otherwise memmove.
 */
#include <string.h>

#include "th_interp_ops.h"

th_interp_status th_interp_copy_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_in < 1 || op->n_out != 1 || op->n_params != TH_COPY_WORDS || !op->in[0].present ||
        !op->out[0].present || op->in[0].bytes != op->out[0].bytes ||
        op->in[0].dtype != op->out[0].dtype) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_copy_eval(const th_interp_op *op)
{
    if (op->out[0].data != op->in[0].data) {
        memmove(op->out[0].data, op->in[0].data, op->out[0].bytes);
    }
    return TH_INTERP_OK;
}
