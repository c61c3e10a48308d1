/* th_batch_matmul_s8: BATCH_MATMUL of int8 tensors as TFLM's int8 reference: per output
 * (batch, i, j) the int32 sum over k of (lhs(i, k) + lhs_offset) * (rhs(k, j) + rhs_offset),
 * requantized with the per-tensor multiplier, plus the output offset, clamped. Batch dims
 * broadcast (a dim of 1 repeats), after both operands are extended with leading 1s to the
 * output's rank; adj_x / adj_y read LHS / RHS transposed in their last two dims. Where the
 * RHS's rows are contiguous (no adj_y) four output columns share each pass over k (each LHS
 * value loaded once for four products); otherwise one column at a time. */
#include <stddef.h>

#include "th_nn.h"
#include "th_nn_support.h"
#include "../reshape/th_nn_shape.h"

/* `s` extended with leading 1s to `rank` dims in `dims`. */
static void extend(const th_shape *s, int32_t rank, int32_t *dims)
{
    for (int32_t d = 0; d < rank; d++) {
        const int32_t from = d - (rank - s->rank);
        dims[d] = from < 0 ? 1 : s->dims[from];
    }
}

static inline int8_t requant(int32_t acc, const th_batch_matmul_params *params,
                             const th_per_tensor_quant *quant)
{
    return th_out_s8(th_requantize(acc, quant->multiplier, quant->shift), params->output_offset,
                     params->activation.min, params->activation.max);
}

th_status th_batch_matmul_s8(const th_context *ctx, const th_batch_matmul_params *params,
                             const th_per_tensor_quant *quant, const th_shape *lhs_shape,
                             const int8_t *lhs, const th_shape *rhs_shape, const int8_t *rhs,
                             const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || quant == NULL || lhs == NULL || rhs == NULL || output == NULL ||
        th_nn_shape_count(lhs_shape) < 0 || th_nn_shape_count(rhs_shape) < 0 ||
        th_nn_shape_count(output_shape) < 0 || !th_nn_activation_ok(&params->activation) ||
        quant->shift < -31 || quant->shift > 30) {
        return TH_ERR_ARG;
    }
    const int32_t rank = output_shape->rank;
    if (rank < 2 || lhs_shape->rank < 2 || rhs_shape->rank < 2 || lhs_shape->rank > rank ||
        rhs_shape->rank > rank) {
        return TH_ERR_ARG;
    }
    int32_t a[TH_MAX_RANK], b[TH_MAX_RANK];
    extend(lhs_shape, rank, a);
    extend(rhs_shape, rank, b);
    const int32_t rows = params->adj_x ? a[rank - 1] : a[rank - 2];
    const int32_t depth = params->adj_x ? a[rank - 2] : a[rank - 1];
    const int32_t depth_b = params->adj_y ? b[rank - 1] : b[rank - 2];
    const int32_t cols = params->adj_y ? b[rank - 2] : b[rank - 1];
    if (depth != depth_b || output_shape->dims[rank - 2] != rows ||
        output_shape->dims[rank - 1] != cols) {
        return TH_ERR_ARG;
    }
    /* batch strides in matrices (0 where a dim broadcasts) */
    int32_t a_step[TH_MAX_RANK], b_step[TH_MAX_RANK];
    int32_t a_size = 1, b_size = 1;
    for (int32_t d = rank - 3; d >= 0; d--) {
        const int32_t n = output_shape->dims[d];
        if ((a[d] != n && a[d] != 1) || (b[d] != n && b[d] != 1)) {
            return TH_ERR_ARG;
        }
        a_step[d] = a[d] == 1 ? 0 : a_size;
        b_step[d] = b[d] == 1 ? 0 : b_size;
        a_size *= a[d];
        b_size *= b[d];
    }
    /* element strides: lhs(i, k) at i * ai + k * ak, rhs(k, j) at k * bk + j * bj */
    const int32_t ai = params->adj_x ? 1 : depth, ak = params->adj_x ? rows : 1;
    const int32_t bk = params->adj_y ? 1 : cols, bj = params->adj_y ? depth : 1;
    const size_t a_matrix = (size_t)rows * (size_t)depth, b_matrix = (size_t)depth * (size_t)cols;
    const int32_t lo = params->lhs_offset, ro = params->rhs_offset;
    int32_t idx[TH_MAX_RANK] = {0};
    size_t a_at = 0, b_at = 0; /* matrix indices of the current batch */
    int8_t *out = output;
    const int32_t batches = th_nn_shape_count(output_shape) / (rows * cols);
    for (int32_t n = 0; n < batches; n++) {
        const int8_t *am = lhs + a_at * a_matrix;
        const int8_t *bm = rhs + b_at * b_matrix;
        for (int32_t i = 0; i < rows; i++) {
            const int8_t *pa = am + (size_t)i * (size_t)ai;
            int32_t j = 0;
            if (bj == 1) { /* RHS rows contiguous: four output columns per pass over k */
                for (; j + 4 <= cols; j += 4) {
                    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                    const int8_t *pb = bm + j;
                    for (int32_t k = 0; k < depth; k++, pb += bk) {
                        const int32_t va = pa[(size_t)k * (size_t)ak] + lo;
                        s0 = th_add_wrap(s0, va * (pb[0] + ro));
                        s1 = th_add_wrap(s1, va * (pb[1] + ro));
                        s2 = th_add_wrap(s2, va * (pb[2] + ro));
                        s3 = th_add_wrap(s3, va * (pb[3] + ro));
                    }
                    out[0] = requant(s0, params, quant);
                    out[1] = requant(s1, params, quant);
                    out[2] = requant(s2, params, quant);
                    out[3] = requant(s3, params, quant);
                    out += 4;
                }
            }
            for (; j < cols; j++) {
                const int8_t *pb = bm + (size_t)j * (size_t)bj;
                int32_t acc = 0;
                for (int32_t k = 0; k < depth; k++) {
                    acc = th_add_wrap(acc, (pa[(size_t)k * (size_t)ak] + lo) *
                                               (pb[(size_t)k * (size_t)bk] + ro));
                }
                *out++ = requant(acc, params, quant);
            }
        }
        /* next batch index, last batch dim fastest */
        for (int32_t d = rank - 3; d >= 0; d--) {
            a_at += (size_t)a_step[d];
            b_at += (size_t)b_step[d];
            if (++idx[d] < output_shape->dims[d]) {
                break;
            }
            a_at -= (size_t)a_step[d] * (size_t)output_shape->dims[d];
            b_at -= (size_t)b_step[d] * (size_t)output_shape->dims[d];
            idx[d] = 0;
        }
    }
    return TH_OK;
}
