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
#define TH_INTERP_MAX_OP_OUTPUTS 2
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
#define TH_KERNEL_MAXIMUM_S8 30u
#define TH_KERNEL_MINIMUM_S8 31u
#define TH_KERNEL_SQDIFF_S8 32u
#define TH_KERNEL_PRELU_S8 33u
#define TH_KERNEL_DIV_S8 34u
#define TH_KERNEL_FILL_S8 35u

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
#define TH_MINMAX_WORDS 0u
#define TH_PRELU_P_INPUT_OFFSET 0u
#define TH_PRELU_P_ALPHA_OFFSET 1u
#define TH_PRELU_P_OUTPUT_OFFSET 2u
#define TH_PRELU_P_MULTIPLIER_POS 3u
#define TH_PRELU_P_SHIFT_POS 4u
#define TH_PRELU_P_MULTIPLIER_NEG 5u
#define TH_PRELU_P_SHIFT_NEG 6u
#define TH_PRELU_WORDS 7u
#define TH_FILL_WORDS 0u

#endif /* TH_INTERP_ABI_H */
