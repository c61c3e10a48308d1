/*
 * th_interp_abi.h - the interpreter's calling convention: kernel ids, parameter words,
 * limits. GENERATED from host/tinyhost/codegen/interpreter_abi.py: do not edit; run
 * `python -m tinyhost.codegen.interpreter_abi --write` (tests/test_interpreter_abi.py
 * fails when this file and the Python declaration differ).
 */
#ifndef TH_INTERP_ABI_H
#define TH_INTERP_ABI_H

#define TH_INTERP_KERNEL_ABI 1u

/* Limits */
#ifndef TH_INTERP_MAX_OPS
#define TH_INTERP_MAX_OPS 256
#endif
#define TH_INTERP_MAX_OP_INPUTS 8
#define TH_INTERP_MAX_OP_OUTPUTS 8
#define TH_INTERP_MAX_RANK 6
#define TH_INTERP_MAX_TENSORS 65534
#define TH_INTERP_MAX_MODEL_IO 16
#define TH_INTERP_ABSENT 0xFFFFu /* operand index of an absent input */

/* Kernel ids (blob op records) */
#define TH_KERNEL_CONV2D_S8 1u
#define TH_KERNEL_DWCONV2D_S8 2u
#define TH_KERNEL_FC_S8 3u
#define TH_KERNEL_FC_PC_S8 4u
#define TH_KERNEL_AVGPOOL_S8 5u
#define TH_KERNEL_MAXPOOL_S8 6u
#define TH_KERNEL_SOFTMAX_S8 7u
#define TH_KERNEL_ADD_S8 8u
#define TH_KERNEL_COPY 9u
#define TH_KERNEL_SUB_S8 10u
#define TH_KERNEL_MUL_S8 11u
#define TH_KERNEL_LUT_S8 12u
#define TH_KERNEL_QUANTIZE_F32_S8 13u
#define TH_KERNEL_DEQUANTIZE_S8_F32 14u
#define TH_KERNEL_MEAN_S8 15u
#define TH_KERNEL_PAD_S8 16u
#define TH_KERNEL_CONCAT_S8 17u
#define TH_KERNEL_TRANSPOSE_S8 18u
#define TH_KERNEL_STRIDED_SLICE_S8 19u
#define TH_KERNEL_ADD_TAB_S8 20u
#define TH_KERNEL_SUB_TAB_S8 21u
#define TH_KERNEL_SPLIT_S8 50u
#define TH_KERNEL_PACK_S8 51u
#define TH_KERNEL_GATHER_S8 52u
#define TH_KERNEL_DEPTH_TO_SPACE_S8 53u
#define TH_KERNEL_SPACE_TO_DEPTH_S8 54u
#define TH_KERNEL_RESIZE_NEAREST_S8 55u
#define TH_KERNEL_RESIZE_BILINEAR_S8 56u
#define TH_KERNEL_ARG_MAX_S8 57u
#define TH_KERNEL_ARG_MIN_S8 58u

/* Parameter words: index of each word in the op's array, and their count */
#define TH_CONV2D_P_INPUT_OFFSET 0u
#define TH_CONV2D_P_OUTPUT_OFFSET 1u
#define TH_CONV2D_P_STRIDE_H 2u
#define TH_CONV2D_P_STRIDE_W 3u
#define TH_CONV2D_P_PAD_TOP 4u
#define TH_CONV2D_P_PAD_LEFT 5u
#define TH_CONV2D_P_DILATION_H 6u
#define TH_CONV2D_P_DILATION_W 7u
#define TH_CONV2D_P_ACT_MIN 8u
#define TH_CONV2D_P_ACT_MAX 9u
#define TH_CONV2D_P_MULTIPLIER 10u
#define TH_CONV2D_P_SHIFT 11u
#define TH_CONV2D_WORDS 12u
#define TH_DWCONV2D_P_INPUT_OFFSET 0u
#define TH_DWCONV2D_P_OUTPUT_OFFSET 1u
#define TH_DWCONV2D_P_STRIDE_H 2u
#define TH_DWCONV2D_P_STRIDE_W 3u
#define TH_DWCONV2D_P_PAD_TOP 4u
#define TH_DWCONV2D_P_PAD_LEFT 5u
#define TH_DWCONV2D_P_DILATION_H 6u
#define TH_DWCONV2D_P_DILATION_W 7u
#define TH_DWCONV2D_P_ACT_MIN 8u
#define TH_DWCONV2D_P_ACT_MAX 9u
#define TH_DWCONV2D_P_MULTIPLIER 10u
#define TH_DWCONV2D_P_SHIFT 11u
#define TH_DWCONV2D_P_CH_MULT 12u
#define TH_DWCONV2D_WORDS 13u
#define TH_FC_P_INPUT_OFFSET 0u
#define TH_FC_P_FILTER_OFFSET 1u
#define TH_FC_P_OUTPUT_OFFSET 2u
#define TH_FC_P_ACT_MIN 3u
#define TH_FC_P_ACT_MAX 4u
#define TH_FC_P_MULTIPLIER 5u
#define TH_FC_P_SHIFT 6u
#define TH_FC_WORDS 7u
#define TH_FC_PC_P_INPUT_OFFSET 0u
#define TH_FC_PC_P_FILTER_OFFSET 1u
#define TH_FC_PC_P_OUTPUT_OFFSET 2u
#define TH_FC_PC_P_ACT_MIN 3u
#define TH_FC_PC_P_ACT_MAX 4u
#define TH_FC_PC_P_MULTIPLIER 5u
#define TH_FC_PC_P_SHIFT 6u
#define TH_FC_PC_WORDS 7u
#define TH_POOL_P_STRIDE_H 0u
#define TH_POOL_P_STRIDE_W 1u
#define TH_POOL_P_FILTER_H 2u
#define TH_POOL_P_FILTER_W 3u
#define TH_POOL_P_PAD_TOP 4u
#define TH_POOL_P_PAD_LEFT 5u
#define TH_POOL_P_ACT_MIN 6u
#define TH_POOL_P_ACT_MAX 7u
#define TH_POOL_WORDS 8u
#define TH_SOFTMAX_P_INPUT_MULTIPLIER 0u
#define TH_SOFTMAX_P_INPUT_LEFT_SHIFT 1u
#define TH_SOFTMAX_P_DIFF_MIN 2u
#define TH_SOFTMAX_WORDS 3u
#define TH_ADD_P_INPUT1_OFFSET 0u
#define TH_ADD_P_INPUT2_OFFSET 1u
#define TH_ADD_P_OUTPUT_OFFSET 2u
#define TH_ADD_P_LEFT_SHIFT 3u
#define TH_ADD_P_INPUT1_MULTIPLIER 4u
#define TH_ADD_P_INPUT1_SHIFT 5u
#define TH_ADD_P_INPUT2_MULTIPLIER 6u
#define TH_ADD_P_INPUT2_SHIFT 7u
#define TH_ADD_P_OUTPUT_MULTIPLIER 8u
#define TH_ADD_P_OUTPUT_SHIFT 9u
#define TH_ADD_P_ACT_MIN 10u
#define TH_ADD_P_ACT_MAX 11u
#define TH_ADD_WORDS 12u
#define TH_COPY_WORDS 0u
#define TH_MUL_P_INPUT1_OFFSET 0u
#define TH_MUL_P_INPUT2_OFFSET 1u
#define TH_MUL_P_OUTPUT_OFFSET 2u
#define TH_MUL_P_OUTPUT_MULTIPLIER 3u
#define TH_MUL_P_OUTPUT_SHIFT 4u
#define TH_MUL_P_ACT_MIN 5u
#define TH_MUL_P_ACT_MAX 6u
#define TH_MUL_WORDS 7u
#define TH_LUT_P_TABLE 0u
#define TH_LUT_WORDS 1u
#define TH_QUANTIZE_P_SCALE_BITS 0u
#define TH_QUANTIZE_P_ZERO_POINT 1u
#define TH_QUANTIZE_WORDS 2u
#define TH_MEAN_P_INPUT_ZERO_POINT 0u
#define TH_MEAN_P_OUTPUT_ZERO_POINT 1u
#define TH_MEAN_P_AXIS_MASK 2u
#define TH_MEAN_P_MULTIPLIER 3u
#define TH_MEAN_P_SHIFT 4u
#define TH_MEAN_WORDS 5u
#define TH_PAD_P_PAD_VALUE 0u
#define TH_PAD_P_BEFORE 1u
#define TH_PAD_P_AFTER 7u
#define TH_PAD_WORDS 13u
#define TH_CONCAT_P_AXIS 0u
#define TH_CONCAT_WORDS 1u
#define TH_TRANSPOSE_P_PERM 0u
#define TH_TRANSPOSE_WORDS 6u
#define TH_SLICE_P_BEGIN 0u
#define TH_SLICE_P_STRIDE 6u
#define TH_SLICE_P_COUNT 12u
#define TH_SLICE_WORDS 18u
#define TH_ADD_TAB_P_INPUT1_OFFSET 0u
#define TH_ADD_TAB_P_INPUT2_OFFSET 1u
#define TH_ADD_TAB_P_OUTPUT_OFFSET 2u
#define TH_ADD_TAB_P_LEFT_SHIFT 3u
#define TH_ADD_TAB_P_INPUT1_MULTIPLIER 4u
#define TH_ADD_TAB_P_INPUT1_SHIFT 5u
#define TH_ADD_TAB_P_INPUT2_MULTIPLIER 6u
#define TH_ADD_TAB_P_INPUT2_SHIFT 7u
#define TH_ADD_TAB_P_OUTPUT_MULTIPLIER 8u
#define TH_ADD_TAB_P_OUTPUT_SHIFT 9u
#define TH_ADD_TAB_P_ACT_MIN 10u
#define TH_ADD_TAB_P_ACT_MAX 11u
#define TH_ADD_TAB_P_TABLE1 12u
#define TH_ADD_TAB_P_TABLE2 13u
#define TH_ADD_TAB_WORDS 14u
#define TH_SPLIT_P_AXIS 0u
#define TH_SPLIT_WORDS 1u
#define TH_GATHER_P_BATCH 0u
#define TH_GATHER_P_OUTER 1u
#define TH_GATHER_P_AXIS_SIZE 2u
#define TH_GATHER_P_INNER 3u
#define TH_GATHER_P_COORDS 4u
#define TH_GATHER_WORDS 5u
#define TH_BLOCK_P_BLOCK 0u
#define TH_BLOCK_WORDS 1u
#define TH_RESIZE_P_ROWS 0u
#define TH_RESIZE_P_COLS 1u
#define TH_RESIZE_WORDS 2u
#define TH_ARG_P_OUTER 0u
#define TH_ARG_P_AXIS_SIZE 1u
#define TH_ARG_P_INNER 2u
#define TH_ARG_WORDS 3u

#endif /* TH_INTERP_ABI_H */
