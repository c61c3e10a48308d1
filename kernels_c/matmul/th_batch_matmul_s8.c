/* th_batch_matmul_s8: BATCH_MATMUL of int8 tensors as TFLM's int8 reference: per output
 * (batch, i, j) the int32 sum over k of (lhs(i, k) + lhs_offset) * (rhs(k, j) + rhs_offset),
 * requantized with the per-tensor multiplier, plus the output offset, clamped. Batch dims
 * broadcast (a dim of 1 repeats), after both operands are extended with leading 1s to the
 * output's rank; adj_x / adj_y read LHS / RHS transposed in their last two dims. Where the
 * RHS's rows are contiguous (no adj_y) four output columns share each pass over k (each LHS
 * value loaded once for four products, the four RHS bytes in one load on DSP builds);
 * otherwise one column at a time (two SMLADs per four k on DSP builds when both operands
 * run contiguously in k: adj_y without adj_x). */
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

/* sum over k < n of (a[k * sa] + lo) * (b[k * sb] + ro); DSP: two SMLADs per four k where
 * both runs are contiguous (the offset bytes are added in 16-bit lanes: |x + offset| <= 255). */
static int32_t dot(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb, int32_t n,
                   int32_t lo, int32_t ro)
{
    int32_t acc = 0, k = 0;
#if TH_NN_HAS_DSP
    if (sa == 1 && sb == 1) {
        const int32_t lo2 = th_pkhbt(lo, lo), ro2 = th_pkhbt(ro, ro);
        for (; k + 4 <= n; k += 4, a += 4, b += 4) {
            const int32_t wa = th_read_s32(a), wb = th_read_s32(b);
            acc = th_smlad(th_sxtab16(lo2, wa), th_sxtab16(ro2, wb), acc);
            acc = th_smlad(th_sxtab16_ror8(lo2, wa), th_sxtab16_ror8(ro2, wb), acc);
        }
    }
#endif
    for (; k < n; k++, a += sa, b += sb) {
        acc = th_add_wrap(acc, (*a + lo) * (*b + ro));
    }
    return acc;
}

/* Four adjacent output columns: acc[c] = sum over k of (a[k * sa] + lo) * (b[k * sb + c] + ro).
 * DSP: the four RHS bytes of row k in one load, offset in 16-bit lanes, four SMLAxy. */
static void block4(const int8_t *a, int32_t sa, const int8_t *b, int32_t sb, int32_t n,
                   int32_t lo, int32_t ro, int32_t *acc)
{
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#if TH_NN_HAS_DSP
    const int32_t ro2 = th_pkhbt(ro, ro);
    for (int32_t k = 0; k < n; k++, a += sa, b += sb) {
        const int32_t va = *a + lo, wb = th_read_s32(b);
        const int32_t b02 = th_sxtab16(ro2, wb), b13 = th_sxtab16_ror8(ro2, wb);
        s0 = th_smlabb(va, b02, s0);
        s2 = th_smlabt(va, b02, s2);
        s1 = th_smlabb(va, b13, s1);
        s3 = th_smlabt(va, b13, s3);
    }
#else
    for (int32_t k = 0; k < n; k++, a += sa, b += sb) {
        const int32_t va = *a + lo;
        s0 = th_add_wrap(s0, va * (b[0] + ro));
        s1 = th_add_wrap(s1, va * (b[1] + ro));
        s2 = th_add_wrap(s2, va * (b[2] + ro));
        s3 = th_add_wrap(s3, va * (b[3] + ro));
    }
#endif
    acc[0] = s0;
    acc[1] = s1;
    acc[2] = s2;
    acc[3] = s3;
}

/* TFLM's requantization + output offset, saturated (th_requantize_s8: multiplier >= 0,
 * checked at entry), then the activation range. */
static inline int8_t requant(int32_t acc, const th_batch_matmul_params *params,
                             const th_per_tensor_quant *quant)
{
    const int32_t v = th_requantize_s8(acc, quant->multiplier, quant->shift,
                                       params->output_offset);
    return (int8_t)th_clamp(v, params->activation.min, params->activation.max);
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
        quant->multiplier < 0 || quant->shift < -31 || quant->shift > 30) {
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
                    int32_t acc[4];
                    block4(pa, ak, bm + j, bk, depth, lo, ro, acc);
                    for (int32_t c = 0; c < 4; c++) {
                        *out++ = requant(acc[c], params, quant);
                    }
                }
            }
            for (; j < cols; j++) {
                const int8_t *pb = bm + (size_t)j * (size_t)bj;
                *out++ = requant(dot(pa, ak, pb, bk, depth, lo, ro), params, quant);
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
