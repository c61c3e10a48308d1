/* th_transpose_s8: TRANSPOSE of an int8 tensor. Dims of size 1 are dropped and output
 * dims that are consecutive input dims merged; the output is then written in order, each
 * innermost run copied with memcpy when it is contiguous in the input too, else gathered
 * with the input stride (on MVE builds: Helium copy loops and VLDRB gathers). */
#include <stddef.h>
#include <string.h>

#include "th_nn.h"
#include "th_nn_shape.h"

#if TH_NN_MVE
/* Instructions per 16 elements of a th_nn_mve_gather / th_nn_mve_scatter loop of that step,
 * and the cost of a call (setup and the walk to the next run), for choosing between them. */
static int32_t mve_cost16(int32_t step)
{
    return step <= 17 ? 4 : step <= 9362 ? 8 : 16;
}
#define MVE_RUN_COST 20

/* The output written by scatters: for each index of the other dims (in output order), the
 * input dim that is contiguous (input stride 1, output dim j) loaded 16 bytes at a time and
 * stored at its output stride. Taken (returns 1) when cheaper than gathering each output
 * run, e.g. NCHW -> NHWC with few channels: runs of C at a stride of H*W, but rows of H*W
 * contiguous in the input to scatter at a stride of C. */
__attribute__((noinline)) static int transpose_by_scatter(int32_t n, const int32_t *dims,
                                                         const int32_t *stride, int32_t count,
                                                         const int8_t *input, int8_t *output)
{
    int32_t j = 0;
    while (j < n && stride[j] != 1) {
        j++;
    }
    if (j >= n - 1) {
        return 0;
    }
    int32_t ostride[TH_MAX_RANK];
    int32_t o = 1;
    for (int32_t d = n - 1; d >= 0; d--) {
        ostride[d] = o;
        o *= dims[d];
    }
    const int64_t gather = (int64_t)count * mve_cost16(stride[n - 1]) +
                           (int64_t)(count / dims[n - 1]) * MVE_RUN_COST * 16;
    const int64_t scatter =
        (int64_t)count * mve_cost16(ostride[j]) + (int64_t)(count / dims[j]) * MVE_RUN_COST * 16;
    if (scatter >= gather || ostride[j] > 9362) {
        return 0;
    }
    int32_t idx[TH_MAX_RANK] = {0};
    int32_t in_off = 0;
    int32_t out_off = 0;
    for (int32_t r = 0; r < count / dims[j]; r++) {
        th_nn_mve_scatter(output + out_off, input + in_off, ostride[j], dims[j]);
        for (int32_t d = n - 1; d >= 0; d--) {
            if (d == j) {
                continue;
            }
            in_off += stride[d];
            out_off += ostride[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            in_off -= stride[d] * dims[d];
            out_off -= ostride[d] * dims[d];
            idx[d] = 0;
        }
    }
    return 1;
}
#endif

th_status th_transpose_s8(const th_context *ctx, const th_transpose_params *params,
                          const th_shape *input_shape, const int8_t *input,
                          const th_shape *output_shape, int8_t *output)
{
    (void)ctx;
    if (params == NULL || input == NULL || output == NULL) {
        return TH_ERR_ARG;
    }
    const int32_t count = th_nn_shape_count(input_shape);
    if (count < 0 || th_nn_shape_count(output_shape) != count ||
        output_shape->rank != input_shape->rank) {
        return TH_ERR_ARG;
    }
    const int32_t rank = input_shape->rank;
    int32_t seen = 0;
    for (int32_t i = 0; i < rank; i++) {
        const int32_t p = params->perm[i];
        if (p < 0 || p >= rank || (seen & (1 << p)) ||
            output_shape->dims[i] != input_shape->dims[p]) {
            return TH_ERR_ARG;
        }
        seen |= 1 << p;
    }
    int32_t in_stride[TH_MAX_RANK];
    th_nn_shape_strides(input_shape, in_stride);
    /* Reduced output dims with their input strides, outermost first. */
    int32_t dims[TH_MAX_RANK];
    int32_t stride[TH_MAX_RANK];
    int32_t n = 0;
    for (int32_t i = 0; i < rank; i++) {
        const int32_t p = params->perm[i];
        const int32_t d = input_shape->dims[p];
        if (d == 1) {
            continue;
        }
        if (n > 0 && stride[n - 1] == in_stride[p] * d) {
            dims[n - 1] *= d; /* input dim p follows the previous one directly */
            stride[n - 1] = in_stride[p];
            continue;
        }
        dims[n] = d;
        stride[n] = in_stride[p];
        n++;
    }
    if (n == 0) {
        output[0] = input[0];
        return TH_OK;
    }
    const int32_t run = dims[n - 1];
    const int32_t run_stride = stride[n - 1];
#if TH_NN_MVE
    if (run_stride != 1 && transpose_by_scatter(n, dims, stride, count, input, output)) {
        return TH_OK;
    }
#endif
    /* the runs of the next outer dim in a plain loop, the dims above it by index */
    const int32_t rows = n >= 2 ? dims[n - 2] : 1;
    const int32_t row_stride = n >= 2 ? stride[n - 2] : 0;
    int32_t idx[TH_MAX_RANK] = {0};
    int32_t off = 0;
    int8_t *out = output;
    for (int32_t r = 0; r < count / run / rows; r++) {
        const int8_t *src = input + off;
        for (int32_t i = 0; i < rows; i++, src += row_stride, out += run) {
            if (run_stride == 1) {
                th_nn_move(out, src, (size_t)run);
            } else {
#if TH_NN_MVE
                th_nn_mve_gather(out, src, run_stride, run);
#else
                for (int32_t k = 0; k < run; k++) {
                    out[k] = src[k * run_stride];
                }
#endif
            }
        }
        for (int32_t d = n - 3; d >= 0; d--) {
            off += stride[d];
            if (++idx[d] < dims[d]) {
                break;
            }
            off -= stride[d] * dims[d];
            idx[d] = 0;
        }
    }
    return TH_OK;
}
