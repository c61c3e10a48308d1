/*
 * th_interp_ops.h - how op adapters (ops_*.c) plug into the interpreter.
 *
 * An adapter turns one blob op (decoded into a th_interp_op view) into one kernels_c call.
 * prepare() runs once at th_interp_init and must check everything the kernel will rely on
 * (tensor ranks, dtypes, shapes against the parameter words, constant arrays inside the
 * blob, the filter layout) and report the scratch the kernel needs; eval() runs the kernel.
 * The op table th_interp_kernels[] (generated per model: only the adapters it uses, or all)
 * lists the adapters a firmware has; a blob naming any other kernel id is refused.
 */
#ifndef TH_INTERP_OPS_H
#define TH_INTERP_OPS_H

#include "th_interp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Blob tensor locations */
enum { TH_LOC_NONE = 0, TH_LOC_ARENA = 1, TH_LOC_CONST = 2 };
#define TH_TENSOR_INTERLEAVED 0x1u
#define TH_TENSOR_VARIABLE 0x2u /* state kept across invokes (arena only), th_interp_reset_state */

typedef struct {
    const th_interp *ctx;
    uint32_t index; /* position in execution order */
    uint32_t n_in;
    uint32_t n_out;
    th_interp_tensor *in;  /* io[0 .. n_in) */
    th_interp_tensor *out; /* io[n_in .. n_in + n_out) */
    const int32_t *params; /* 4-byte aligned words inside the blob */
    uint32_t n_params;
    void *scratch; /* in the arena, 4-byte aligned, or NULL */
    uint32_t scratch_size;
    /* inputs then outputs: n_in + n_out <= TH_INTERP_MAX_OP_IO, so many-input ops
     * (CONCATENATION) and many-output ones (SPLIT) share one array on the stack */
    th_interp_tensor io[TH_INTERP_MAX_OP_IO];
} th_interp_op;

typedef struct {
    uint16_t id;
    const char *name;
    /* Validate the op; *scratch_needed = bytes of scratch the kernel asks for. */
    th_interp_status (*prepare)(const th_interp_op *op, uint32_t *scratch_needed);
    /* Run it; a kernel error is returned as TH_INTERP_E_KERNEL_FAILED. */
    th_interp_status (*eval)(const th_interp_op *op);
} th_interp_kernel;

/* The op table (th_ops_table.c, generated). */
extern const th_interp_kernel th_interp_kernels[];
extern const uint32_t th_interp_kernel_count;

/* Pointer to `count` elements of `elem_size` bytes at constants offset `offset`, or NULL if
 * any byte lies outside the constants section or the offset is not elem_size-aligned. */
const void *th_interp_const(const th_interp_op *op, int32_t offset, uint32_t count,
                            uint32_t elem_size);

/* Helpers for prepare(): tensor checks. */
int th_interp_is(const th_interp_tensor *t, uint8_t dtype, uint8_t rank);
uint32_t th_interp_elements(const th_interp_tensor *t);

/* Adapters (ops_*.c) */
th_interp_status th_interp_conv2d_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_conv2d_s8_eval(const th_interp_op *op);
th_interp_status th_interp_dwconv2d_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_dwconv2d_s8_eval(const th_interp_op *op);
th_interp_status th_interp_fc_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_fc_s8_eval(const th_interp_op *op);
th_interp_status th_interp_fc_pc_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_fc_pc_s8_eval(const th_interp_op *op);
th_interp_status th_interp_avgpool_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_avgpool_s8_eval(const th_interp_op *op);
th_interp_status th_interp_maxpool_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_maxpool_s8_eval(const th_interp_op *op);
th_interp_status th_interp_softmax_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_softmax_s8_eval(const th_interp_op *op);
th_interp_status th_interp_add_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_add_s8_eval(const th_interp_op *op);
th_interp_status th_interp_sub_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_sub_s8_eval(const th_interp_op *op);
th_interp_status th_interp_add_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_add_tab_s8_eval(const th_interp_op *op);
th_interp_status th_interp_sub_tab_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_sub_tab_s8_eval(const th_interp_op *op);
th_interp_status th_interp_mul_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_mul_s8_eval(const th_interp_op *op);
th_interp_status th_interp_maximum_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_maximum_s8_eval(const th_interp_op *op);
th_interp_status th_interp_minimum_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_minimum_s8_eval(const th_interp_op *op);
th_interp_status th_interp_sqdiff_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_sqdiff_s8_eval(const th_interp_op *op);
th_interp_status th_interp_prelu_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_prelu_s8_eval(const th_interp_op *op);
th_interp_status th_interp_div_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_div_s8_eval(const th_interp_op *op);
th_interp_status th_interp_fill_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_fill_s8_eval(const th_interp_op *op);
th_interp_status th_interp_lut_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_lut_s8_eval(const th_interp_op *op);
th_interp_status th_interp_quantize_f32_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_quantize_f32_s8_eval(const th_interp_op *op);
th_interp_status th_interp_dequantize_s8_f32_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_dequantize_s8_f32_eval(const th_interp_op *op);
th_interp_status th_interp_mean_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_mean_s8_eval(const th_interp_op *op);
th_interp_status th_interp_sum_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_sum_s8_eval(const th_interp_op *op);
th_interp_status th_interp_reduce_max_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_reduce_max_s8_eval(const th_interp_op *op);
th_interp_status th_interp_pad_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_pad_s8_eval(const th_interp_op *op);
th_interp_status th_interp_concat_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_concat_s8_eval(const th_interp_op *op);
th_interp_status th_interp_transpose_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_transpose_s8_eval(const th_interp_op *op);
th_interp_status th_interp_strided_slice_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_strided_slice_s8_eval(const th_interp_op *op);
th_interp_status th_interp_svdf_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_svdf_s8_eval(const th_interp_op *op);
th_interp_status th_interp_lstm_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_lstm_s8_eval(const th_interp_op *op);
th_interp_status th_interp_conv2d_s4_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_conv2d_s4_eval(const th_interp_op *op);
th_interp_status th_interp_dwconv2d_s4_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_dwconv2d_s4_eval(const th_interp_op *op);
th_interp_status th_interp_fc_s4_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_fc_s4_eval(const th_interp_op *op);
th_interp_status th_interp_logistic_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_logistic_s16_eval(const th_interp_op *op);
th_interp_status th_interp_tanh_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_tanh_s16_eval(const th_interp_op *op);
th_interp_status th_interp_sub_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_sub_s16_eval(const th_interp_op *op);
th_interp_status th_interp_fc_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_fc_s16_eval(const th_interp_op *op);
th_interp_status th_interp_conv2d_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_conv2d_s16_eval(const th_interp_op *op);
th_interp_status th_interp_dwconv2d_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_dwconv2d_s16_eval(const th_interp_op *op);
th_interp_status th_interp_add_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_add_s16_eval(const th_interp_op *op);
th_interp_status th_interp_mul_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_mul_s16_eval(const th_interp_op *op);
th_interp_status th_interp_softmax_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_softmax_s16_eval(const th_interp_op *op);
th_interp_status th_interp_softmax_s8_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_softmax_s8_s16_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s8_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s8_s16_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s16_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s16_s8_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s8_s32_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s8_s32_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s16_s32_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s16_s32_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s32_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s32_s8_eval(const th_interp_op *op);
th_interp_status th_interp_requantize_s32_s16_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_requantize_s32_s16_eval(const th_interp_op *op);
/* ops_matmul.c */
th_interp_status th_interp_batch_matmul_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_batch_matmul_s8_eval(const th_interp_op *op);
/* ops_movement.c */
th_interp_status th_interp_split_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_split_s8_eval(const th_interp_op *op);
th_interp_status th_interp_pack_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_pack_s8_eval(const th_interp_op *op);
th_interp_status th_interp_gather_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_gather_s8_eval(const th_interp_op *op);
th_interp_status th_interp_depth_to_space_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_depth_to_space_s8_eval(const th_interp_op *op);
th_interp_status th_interp_space_to_depth_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_space_to_depth_s8_eval(const th_interp_op *op);
th_interp_status th_interp_resize_nearest_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_resize_nearest_s8_eval(const th_interp_op *op);
th_interp_status th_interp_resize_bilinear_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_resize_bilinear_s8_eval(const th_interp_op *op);
th_interp_status th_interp_arg_max_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_arg_max_s8_eval(const th_interp_op *op);
th_interp_status th_interp_arg_min_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_arg_min_s8_eval(const th_interp_op *op);
/* ops_rowwise.c */
th_interp_status th_interp_log_softmax_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_log_softmax_s8_eval(const th_interp_op *op);
th_interp_status th_interp_l2norm_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_l2norm_s8_eval(const th_interp_op *op);
th_interp_status th_interp_cumsum_s8_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_cumsum_s8_eval(const th_interp_op *op);
th_interp_status th_interp_copy_prepare(const th_interp_op *op, uint32_t *scratch);
th_interp_status th_interp_copy_eval(const th_interp_op *op);

#ifdef __cplusplus
}
#endif

#endif /* TH_INTERP_OPS_H */
