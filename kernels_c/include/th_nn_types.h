/*
 * th_nn_types.h - plain structs and the status enum of the tinyhost int8 kernels.
 *
 * Conventions (ARCHITECTURE.md §4.1-§4.3):
 *  - Activations are int8 NHWC; a th_dims describes them as (n, h, w, c).
 *  - CONV_2D filters are OHWI int8, described as (n=Cout, h=KH, w=KW, c=Cin/groups).
 *    DEPTHWISE_CONV_2D filters are [1, KH, KW, Cout]. FULLY_CONNECTED weights are
 *    [Cout, Cin], described as (n=Cout, h=1, w=1, c=Cin).
 *  - On builds with the DSP path (TH_NN_HAS_DSP == 1) CONV_2D and FULLY_CONNECTED take
 *    their filter in an offline-reordered layout instead, see th_nn.h.
 *  - Bias is int32 [Cout] or NULL. Multipliers are Q31 significands, shifts are
 *    exponents (positive = left), exactly as TFLite's QuantizeMultiplier returns them.
 */
#ifndef TH_NN_TYPES_H
#define TH_NN_TYPES_H

#include <stdint.h>

/* Build paths, stated once for the public and the support headers (th_nn.h explains them):
 * TH_NN_DSP_NATIVE - the core has the DSP extension and it is used;
 * TH_NN_HAS_DSP - the DSP algorithms are compiled (natively, or modelled in C for host tests
 *                 with TH_NN_EMULATE_DSP);
 * TH_NN_FILTER_INTERLEAVED - CONV_2D / FULLY_CONNECTED filters come in the DSP layout
 *                 (follows TH_NN_HAS_DSP, except on MVE builds, unless
 *                 TH_NN_INTERLEAVED_FILTERS says otherwise). */
#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !defined(TH_NN_FORCE_PORTABLE)
#define TH_NN_DSP_NATIVE 1
#else
#define TH_NN_DSP_NATIVE 0
#endif
#if TH_NN_DSP_NATIVE || (defined(TH_NN_EMULATE_DSP) && TH_NN_EMULATE_DSP)
#define TH_NN_HAS_DSP 1
#else
#define TH_NN_HAS_DSP 0
#endif
/* TH_NN_MVE - integer Helium (MVE, e.g. -mcpu=cortex-m55 with a hard or softfp float ABI)
 *                 is used: CONV_2D and FULLY_CONNECTED run their MVE paths and take their
 *                 filters in the plain OHWI / [Cout, Cin] layout (K contiguous per output
 *                 channel, what VMLADAV wants); DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
 *                 MAX_POOL_2D, MUL, MEAN (over [R, C]), ADD and SUB (int8 and int16), the
 *                 LUT activations (th_lut_s8) and int8 SOFTMAX have MVE paths too (same
 *                 scratch rules); the other kernels keep their DSP paths. */
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && TH_NN_DSP_NATIVE && \
    !defined(TH_NN_FORCE_NO_MVE)
#define TH_NN_MVE 1
#else
#define TH_NN_MVE 0
#endif
#if defined(TH_NN_INTERLEAVED_FILTERS)
#define TH_NN_FILTER_INTERLEAVED TH_NN_INTERLEAVED_FILTERS
#elif TH_NN_MVE
#define TH_NN_FILTER_INTERLEAVED 0
#else
#define TH_NN_FILTER_INTERLEAVED TH_NN_HAS_DSP
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every kernel returns one of these; TH_OK is the only success. */
typedef enum {
    TH_OK = 0,
    TH_ERR_ARG = 1,         /* NULL pointer, non-positive or inconsistent dims, bad range */
    TH_ERR_UNSUPPORTED = 2, /* a specialized variant refuses these params: use the wrapper */
    TH_ERR_SCRATCH = 3      /* scratch missing, too small or not 4-byte aligned */
} th_status;

/* Caller-owned scratch memory (from the arena). size in bytes; buf 4-byte aligned. */
typedef struct {
    void *buf;
    int32_t size;
} th_context;

typedef struct {
    int32_t n;
    int32_t h;
    int32_t w;
    int32_t c;
} th_dims;

typedef struct {
    int32_t h;
    int32_t w;
} th_tile;

/* Inclusive int8 range applied last (the fused activation). */
typedef struct {
    int32_t min;
    int32_t max;
} th_activation;

typedef struct {
    int32_t input_offset;  /* -input zero point, in [-127, 128] */
    int32_t output_offset; /* output zero point, in [-128, 127] */
    th_tile stride;        /* >= 1 */
    th_tile padding;       /* top and left padding; bottom/right follow from the output dims */
    th_tile dilation;      /* >= 1 */
    th_activation activation;
} th_conv_params;

typedef struct {
    int32_t input_offset;
    int32_t output_offset;
    int32_t ch_mult; /* output channels per input channel (depth multiplier) */
    th_tile stride;
    th_tile padding;
    th_tile dilation;
    th_activation activation;
} th_dw_conv_params;

typedef struct {
    int32_t input_offset;
    int32_t filter_offset; /* -weights zero point (per-tensor FC only; 0 per channel) */
    int32_t output_offset;
    th_activation activation;
} th_fc_params;

/* One (multiplier, shift) per output channel. */
typedef struct {
    const int32_t *multiplier;
    const int32_t *shift;
} th_per_channel_quant;

typedef struct {
    int32_t multiplier;
    int32_t shift;
} th_per_tensor_quant;

/* ---- pooling, elementwise, activations, data movement ---- */
/* The structs below mirror the host dataclasses of tinyhost.arith (field for field, split
 * into op params and quant params like the MAC kernels); the code generators fill them
 * from those dataclasses. */

#define TH_MAX_RANK 6

/* Row-major shape, dims[0] outermost; rank in [1, TH_MAX_RANK], every dim >= 1. */
typedef struct {
    int32_t rank;
    int32_t dims[TH_MAX_RANK];
} th_shape;

/* The fast exact requantization's constants (th_nn_support.h: th_fast_rq_make and the
 * proof); here because prepared calls (th_add_prep) carry one. */
typedef struct {
    int32_t multiplier;
    int32_t round_zp; /* 2^(e-1) + zp * 2^e */
    int32_t e;
} th_fast_rq;

/* A binary kernel's broadcast walk (th_nn_broadcast.h th_nn_bcast_init): the output's dims
 * with dims of 1 dropped and neighbours both inputs walk alike merged, outermost first;
 * element strides of each input (0 where it broadcasts); element counts. Entries past rank
 * are not read (th_nn_bcast_init leaves them; the host writes 0). */
typedef struct {
    int32_t rank; /* >= 1 */
    int32_t dims[TH_MAX_RANK];
    int32_t stride1[TH_MAX_RANK];
    int32_t stride2[TH_MAX_RANK];
    int32_t count1;
    int32_t count2;
    int32_t count;
} th_bcast_walk;

/* AVERAGE_POOL_2D / MAX_POOL_2D (arith.pool.PoolParams). Input and output share their
 * quantization (TFLM requires it), so there is no quant struct. */
typedef struct {
    th_tile stride;  /* >= 1 */
    th_tile filter;  /* >= 1 */
    th_tile padding; /* top and left; bottom/right follow from the output dims */
    th_activation activation;
} th_pool_params;

/* A prepared int8 MAX_POOL_2D (th_maxpool_s8_prepare, th_maxpool_s8_prepared): the call's
 * geometry and dispatch inputs made once for a given scratch size (ARCHITECTURE.md §4.4b).
 * The generic entry fills it per call; the compiled backend on the host
 * (tinyhost.arith.pool.maxpool_prep, checked word for word against th_maxpool_s8_prepare by
 * the kernel tests) and keeps it in flash. Every field an int32, the same in every build
 * (the DSP paths' fields are filled in portable and MVE builds too, and left unread). */
typedef struct {
    th_pool_params params;
    th_dims in;
    th_dims out;
    int32_t fast;  /* the padded layout's scratch bytes (DSP), 0: not given or none */
    int32_t sep;   /* the separable path's scratch bytes, 0: not given or none */
    int32_t rows;  /* rows of column maxima in the fast scratch (1, 2 or 4; 1 without fast) */
    int32_t c1;    /* 1: max_c1_words (one channel, strides >= 2, fast given) */
    int32_t c0;    /* the column-maxima bytes computed from the input: [c0, c0 + span) */
    int32_t span;  /* (padded: of the padded layout; else from column 0) */
    int32_t cols;  /* the padded layout's bytes a row ((OW - 1) * SW + KW) * C, else 0 */
    int32_t ya;    /* the lanes' output rows [ya, yb): windows inside the image ... */
    int32_t yb;
    int32_t rows_padded; /* ... in one max_rows_padded call (1) */
    int32_t clamp; /* the activation range is not [-128, 127] */
} th_maxpool_prep;

/* ADD / SUB (arith.elementwise.AddParams): offsets, shift and clamp ... */
typedef struct {
    int32_t input1_offset; /* -input1 zero point */
    int32_t input2_offset; /* -input2 zero point */
    int32_t output_offset; /* output zero point */
    int32_t left_shift;    /* 20 for int8 */
    th_activation activation;
} th_add_params;

/* ... and the three multipliers (every shift <= 0). */
typedef struct {
    int32_t input1_multiplier;
    int32_t input1_shift;
    int32_t input2_multiplier;
    int32_t input2_shift;
    int32_t output_multiplier;
    int32_t output_shift;
} th_add_quant;

/* A prepared int8 ADD / SUB (th_add_s8_prepare, th_add_s8_prepared): everything the kernel
 * derives from params, quant, the tables and the shapes, made once. The generic entries fill
 * it on every call; the compiled backend fills it on the host
 * (tinyhost.arith.elementwise.add_prep, checked field by field against th_add_s8_prepare by
 * the kernel tests) and keeps it in flash. Pointers first: the int32 fields from walk to rq
 * are one run without padding on every target. */
typedef struct {
    const int32_t *t1; /* th_add_s8_tables' tables, NULL: rescaled per element */
    const int32_t *t2;
    th_bcast_walk walk;
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t left_shift;
    int32_t m1; /* input multipliers and right shifts (-shift) */
    int32_t e1;
    int32_t m2;
    int32_t e2;
    int32_t mo; /* output multiplier and right shift */
    int32_t eo;
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t subtract; /* 0: input1 + input2, 1: input1 - input2 */
    int32_t fast; /* th_fast_rq_apply exact for every sum (the DSP paths; set in every build) */
    th_fast_rq rq; /* of (mo, -eo, out_offset) when fast, else zeros */
    /* The rounding's sign term (th_fast_rq_apply: + (acc < 0 ? -1 : 0)) proven idle for
     * every pair of int8 inputs (th_add_s8_prepare, exhaustively; the generic entries leave
     * 0): 0 keep it, 1 drop it, 2 drop it and use rq.round_zp - 1 (no tie above zero). */
    int32_t nosign;
    /* The separable form (ARCHITECTURE.md §4.4b), proven on the host only (add_sep: every
     * one of the 65536 input pairs checked against TFLM's arithmetic; th_add_s8_prepare and
     * the generic entries leave NULL / 0, "not proven", and never read them): with
     * T = sep[(uint8_t)input1], C = sep[256 + (uint8_t)input2] (the output zero point, the
     * sign of SUB and -L * 2^16 folded into C) the output is min(USAT8((T + C) >> 16), H) + L,
     * no sum leaving int32: (L, H) = (-128, 255) for sep_mode 0, (act_min, 255) for 1,
     * (act_min, act_max - act_min) for 2. Only where fast. */
    const int32_t *sep;
    int32_t sep_mode;
    /* The host's choice of the separable loop (ARCHITECTURE.md §4.4b; the compiled backend,
     * tinyhost.arith.elementwise add_go, the same choice th_nn_add_sub_s8.c sep_run makes;
     * th_add_s8_prepare and the generic entries leave go 0, "not chosen", and the kernel
     * chooses): go = form * 2 + first, form a TH_ADD_GO_* and first 1 where input1 is the
     * input read through the first table (the one constant along a run; input1 for the same
     * shape), the loop's run length go_n and run count go_rows. Only with sep; a form the
     * build left out runs the kernel's own choice. */
    int32_t go;
    int32_t go_n;
    int32_t go_rows;
} th_add_prep;

/* th_add_prep go's forms (arith/elementwise.py GO_* mirrors them). */
enum {
    TH_ADD_GO_ROWS = 1, /* runs of n, a constant each (sep_rows_t) */
    TH_ADD_GO_MIX1,     /* ... four runs a block, n % 4 == 1, 2, 3 (sep_mix_t) */
    TH_ADD_GO_MIX2,
    TH_ADD_GO_MIX3,
    TH_ADD_GO_MIX_N2, /* ... n of 2, 3, 5, 6, 7: the block straight-line */
    TH_ADD_GO_MIX_N3,
    TH_ADD_GO_MIX_N5,
    TH_ADD_GO_MIX_N6,
    TH_ADD_GO_MIX_N7,
    TH_ADD_GO_SAME, /* one run of n, both inputs advancing (sep_same_t) */
    TH_ADD_GO_CHAN, /* go_rows rows of n against one row (sep_chan) */
    TH_ADD_GO_ROWS8, /* runs of n % 8 == 0, a constant each (sep_rows_t, n % 8 known) */
    TH_ADD_GO_ROWS84, /* ... n % 8 == 4 */
    TH_ADD_GO_MIX_N9, /* four runs a block, n of 9, 10, 11: the block straight-line */
    TH_ADD_GO_MIX_N10,
    TH_ADD_GO_MIX_N11,
    TH_ADD_GO_ROWS16 /* runs of n == 16, a constant each: the run straight-line */
};

/* MUL (arith.elementwise.MulParams); the multiplier comes as a th_per_tensor_quant. */
typedef struct {
    int32_t input1_offset;
    int32_t input2_offset;
    int32_t output_offset;
    th_activation activation;
} th_mul_params;

/* A prepared int8 MUL (th_mul_s8_prepare, th_mul_s8_prepared), as th_add_prep: the broadcast
 * walk and the constants th_mul_s8 derives per call (tinyhost.arith.elementwise.mul_prep on
 * the host). No pointers: every field an int32. */
typedef struct {
    th_bcast_walk walk;
    int32_t in1_offset;
    int32_t in2_offset;
    int32_t multiplier;
    int32_t shift; /* -31..30, > 0 a left shift */
    int32_t out_offset;
    int32_t act_min;
    int32_t act_max;
    int32_t fast; /* th_fast_rq_apply exact for every product (|.| <= 255^2; every build) */
    int32_t left; /* shift in [0, 13]: the DSP left-shift rows */
    th_fast_rq rq; /* of (multiplier, shift, out_offset) when fast, else zeros */
    int32_t nosign; /* as th_add_prep's, over the 65536 products (the fast rows only) */
    /* The line form (ARCHITECTURE.md §4.4b), proven on the host over the 65536 input pairs
     * (tinyhost.arith.elementwise.mul_line; th_mul_s8_prepare and the generic entries leave
     * line 0, "not proven"): for a factor value y, m = ((y + oy) line_a + 2^(line_t - 1)) >>
     * line_t and every output is sat((x + ox) m + line_k) >> 16) (SSAT; USAT and the clamp
     * to [act_min, act_max] where the activation is narrower than int8). line: 0 not
     * proven, 1 input2 is the broadcast factor y (x input1), 2 input1 is. */
    int32_t line;
    int32_t line_a;
    int32_t line_t;
    int32_t line_k;
    /* The host's path choice (ARCHITECTURE.md §4.4b; arith/elementwise.py mul_px): 1 (x
     * input1, the factor y input2) or 2 (the other way) where the line is proven, the
     * activation clamps and the call is a spatial broadcast or a scalar one below any table's
     * pay (C >= 4 outputs a pixel): th_mul_s8_prepared runs the whole call as the line's pixel
     * loop on the DSP builds from px_w (line_a, (oy line_a + 2^(line_t - 1)) mod 2^32,
     * line_t, ox, line_k, C, C % 4, th_nn_both_k4, th_nn_both_c4, pixels). 0: not chosen
     * (th_mul_s8_prepare and the generic entries; px_w zeros), the kernel's own dispatch. */
    int32_t px;
    int32_t px_w[10];
    /* The host's scalar-loop choice (ARCHITECTURE.md §4.4b; arith/elementwise.py mul_sc): 1
     * (x input1, the scalar y input2) or 2 (the other way) for an int8 (unclamped) scalar
     * broadcast on the right-shift rows with the sign term (fast, nosign 0, no line), e =
     * -shift in 1-8 and fewer outputs than any output table pays for: th_mul_s8_prepared runs
     * it as one assembly loop (mul_sc_e1..e8, e an immediate) on the DSP builds from sc_w
     * (outputs, multiplier, round_zp, ox in both halfwords, 2 oy) where x and the output are
     * word-aligned. 0: not chosen (th_mul_s8_prepare and the generic entries; sc_w zeros). */
    int32_t sc;
    int32_t sc_w[5];
} th_mul_prep;

/* PRELU (arith.binary.PreluParams): two MultiplyByQuantizedMultiplier pairs, s_in / s_out
 * for x >= zero point and s_in * s_alpha / s_out for the product below it. */
typedef struct {
    int32_t input_offset;  /* -input zero point */
    int32_t alpha_offset;  /* -alpha zero point */
    int32_t output_offset; /* output zero point */
    int32_t multiplier_pos;
    int32_t shift_pos;
    int32_t multiplier_neg;
    int32_t shift_neg;
} th_prelu_params;

/* SOFTMAX over the last dim (arith.activations.SoftmaxParams); output zero point -128,
 * scale 1/256 (int8) or -32768, 1/65536 (int16). */
typedef struct {
    int32_t input_multiplier;
    int32_t input_left_shift; /* >= 0 */
    int32_t diff_min;         /* <= 0 */
} th_softmax_params;

/* LOG_SOFTMAX over the last dim (arith.rowwise.LogSoftmaxParams); output scale 16/256,
 * zero point 127. */
typedef struct {
    int32_t input_multiplier;
    int32_t input_left_shift; /* >= 0 */
    int32_t reverse_multiplier;
    int32_t reverse_shift; /* <= 0 */
    int32_t diff_min;      /* <= 0 */
} th_log_softmax_params;

/* L2_NORMALIZATION over the last dim (arith.rowwise.L2NormParams); output Q0.7 (scale
 * 1/128, zero point 0). */
typedef struct {
    int32_t input_offset; /* -input zero point */
} th_l2norm_params;

/* CUMSUM (arith.rowwise.CumsumParams): ADD's input and output rescaling, left shift 20. */
typedef struct {
    int32_t input_offset;  /* -input zero point */
    int32_t output_offset; /* output zero point */
    int32_t input_multiplier;
    int32_t input_shift; /* <= 0 */
    int32_t output_multiplier;
    int32_t output_shift; /* <= 0 */
    int32_t exclusive;
    int32_t reverse;
} th_cumsum_params;

/* SVDF (arith.svdf.SvdfParams): int8 input, int16 state with zero point 0 (the host
 * refuses any other), int8 output. */
typedef struct {
    int32_t input_offset;  /* -input zero point */
    int32_t output_offset; /* output zero point */
    int32_t rank;          /* filters per unit, >= 1 */
} th_svdf_params;

/* The two requantizations: the feature sum into the state's scale, the time sum into the
 * output's. */
typedef struct {
    int32_t feature_multiplier;
    int32_t feature_shift;
    int32_t time_multiplier;
    int32_t time_shift;
} th_svdf_quant;

/* UNIDIRECTIONAL_SEQUENCE_LSTM (arith.lstm.LstmParams): int8 input, hidden state and gate
 * weights, int16 cell state at scale 2^cell_scale_power (zero point 0), int32 biases. */
typedef struct {
    int32_t batches;
    int32_t time_steps;
    int32_t input_size;
    int32_t state_size;
    int32_t time_major;        /* input/output [time, batch, .] (else [batch, time, .]) */
    int32_t input_offset;      /* -input zero point */
    int32_t hidden_offset;     /* -hidden state zero point */
    int32_t hidden_zero_point; /* added to the new hidden values */
    int32_t cell_scale_power;  /* in [-40, 2] */
    int32_t cell_clip;         /* quantized cell clip, 0: none */
} th_lstm_params;

/* Per gate (input, forget, cell, output): the input and the recurrent product into Q3.12;
 * then forget x cell and input x cell gate into the cell's scale, output x tanh(cell) into
 * the hidden state's. */
typedef struct {
    int32_t input_multiplier[4];
    int32_t input_shift[4];
    int32_t recurrent_multiplier[4];
    int32_t recurrent_shift[4];
    int32_t forget_cell_multiplier;
    int32_t forget_cell_shift;
    int32_t input_cell_multiplier;
    int32_t input_cell_shift;
    int32_t hidden_multiplier;
    int32_t hidden_shift;
} th_lstm_quant;

/* QUANTIZE float32 -> int8 (arith.activations.QuantizeParams) and DEQUANTIZE int8 ->
 * float32 (DequantizeParams): the tensor's float32 scale and zero point. */
typedef struct {
    float scale;
    int32_t zero_point;
} th_affine_params;

/* QUANTIZE between int8 and int16 (arith.activations.RequantizeParams); the multiplier
 * (input scale / output scale) comes as a th_per_tensor_quant. */
typedef struct {
    int32_t input_zero_point;
    int32_t output_zero_point;
} th_requantize_params;

/* PAD / PADV2: per dim of the input shape, elements added before and after. pad_value is
 * the raw int8 fill (PAD: the output zero point; PADV2: the constant operand). */
typedef struct {
    int32_t pad_value;
    int32_t before[TH_MAX_RANK];
    int32_t after[TH_MAX_RANK];
} th_pad_params;

/* CONCATENATION: axis in [0, rank) (resolved), inputs in order. */
typedef struct {
    int32_t axis;
    int32_t num_inputs; /* >= 1 */
} th_concat_params;

/* TRANSPOSE: output dim i is input dim perm[i]. */
typedef struct {
    int32_t perm[TH_MAX_RANK];
} th_transpose_params;

/* STRIDED_SLICE after the host resolved masks (see th_strided_slice_s8): per input dim,
 * the first index and the step (non-zero, may be negative); the count per dim is the
 * output shape given to the kernel (same rank as the input). */
typedef struct {
    int32_t begin[TH_MAX_RANK];
    int32_t stride[TH_MAX_RANK];
} th_strided_slice_params;

/* MEAN (arith.reduce.MeanParams); the multiplier/shift of input_scale / output_scale
 * (before the 1/count fold, which the kernel does as TFLM's Eval) come as a
 * th_per_tensor_quant. */
typedef struct {
    int32_t input_zero_point;
    int32_t output_zero_point;
    uint32_t axis_mask; /* bit i set: input dim i is reduced */
} th_mean_params;

/* SPLIT / SPLIT_V / UNPACK: axis in [0, rank) (resolved), outputs in order. */
typedef struct {
    int32_t axis;
    int32_t num_outputs; /* >= 1 */
} th_split_params;

/* GATHER, the shapes collapsed on the host: the input is (batch, outer, axis_size, inner),
 * the indices (batch, coords), the output (batch, outer, coords, inner). */
typedef struct {
    int32_t batch;
    int32_t outer;
    int32_t axis_size;
    int32_t inner;
    int32_t coords; /* indices per batch */
} th_gather_params;

/* RESIZE_NEAREST_NEIGHBOR: rows[OH] and cols[OW] are source indices. RESIZE_BILINEAR:
 * rows[3 * OH] and cols[3 * OW] are (lower index, upper index, upper weight in 1/1024)
 * per output row / column (tinyhost.arith.resize). */
typedef struct {
    const int32_t *rows;
    const int32_t *cols;
} th_resize_tables;

/* BATCH_MATMUL (arith.matmul.BatchMatMulParams); the multiplier comes as a
 * th_per_tensor_quant. adj_x / adj_y: the operand is stored transposed in its last two dims. */
typedef struct {
    int32_t lhs_offset;    /* -lhs zero point */
    int32_t rhs_offset;    /* -rhs zero point */
    int32_t output_offset; /* output zero point */
    int32_t adj_x;
    int32_t adj_y;
    th_activation activation;
} th_batch_matmul_params;

/* ARG_MAX / ARG_MIN: the input as (outer, axis_size, inner); the output (outer, inner). */
typedef struct {
    int32_t outer;
    int32_t axis_size;
    int32_t inner;
} th_arg_params;

#ifdef __cplusplus
}
#endif

#endif /* TH_NN_TYPES_H */
