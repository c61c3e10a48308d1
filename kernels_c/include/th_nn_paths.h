/*
 * th_nn_paths.h - optional kernel paths a build may leave out (ARCHITECTURE.md §4.2c).
 *
 * A kernel that picks among specialized paths at run time links them all, though one model
 * takes few. Each such choice is written `if (<applies> && TH_NN_PATH(NAME))`: the path
 * runs only where it applies and the build keeps it (TH_NN_KEEP_NAME, 1 unless the build's
 * th_nn_config.h says 0). Where a path is left out, the call falls to the kernel's next
 * choice and in the end to its general path, which is always kept and exact for every input
 * that reaches it: leaving a path out never changes a result, only code size and speed.
 *
 * The compiled backend learns the paths its model takes by running the model once on the
 * host with the same kernels built with TH_NN_RECORD_PATHS (the DSP ones modelled in C),
 * where TH_NN_PATH reports each path taken (codegen/prune.py); paths written only in
 * assembly are recorded by the C condition that selects them.
 */
#ifndef TH_NN_PATHS_H
#define TH_NN_PATHS_H

#include <th_nn_config.h> /* the default, unless the build forced its own in first */

#if defined(TH_NN_RECORD_PATHS) && TH_NN_RECORD_PATHS
/* Supplied by the recording program (tools/path-record/record.c), never by a firmware. */
void th_nn_path_taken(const char *name);
#define TH_NN_PATH(name) (th_nn_path_taken(#name), 1)
#else
#define TH_NN_PATH(name) TH_NN_KEEP_##name
#endif

/* The paths, each kept unless th_nn_config.h says otherwise. */
#ifndef TH_NN_KEEP_CONV_DIRECT /* th_nn_conv_direct_s8: few output pixels, no im2col */
#define TH_NN_KEEP_CONV_DIRECT 1
#endif
#ifndef TH_NN_KEEP_CONV_DIRECT_PAIRS /* ... Cout 2, whole-word filter rows: channel pairs */
#define TH_NN_KEEP_CONV_DIRECT_PAIRS 1
#endif
#ifndef TH_NN_KEEP_CONV_DIRECT_COLUMN /* its one-column images: one filter column, as a row */
#define TH_NN_KEEP_CONV_DIRECT_COLUMN 1
#endif
#ifndef TH_NN_KEEP_CONV_DIRECT_EDGES /* ... Cout 1: border pixels as quads from a padded patch */
#define TH_NN_KEEP_CONV_DIRECT_EDGES 1
#endif
#ifndef TH_NN_KEEP_CONV_DIRECT_ROW_RUN /* ... and with widened rows: each row's quads in asm runs */
#define TH_NN_KEEP_CONV_DIRECT_ROW_RUN 1
#endif
#ifndef TH_NN_KEEP_CONV_FEW_COUT /* th_nn_conv_few_cout_s8: Cout 2-3, weights widened once */
#define TH_NN_KEEP_CONV_FEW_COUT 1
#endif
#ifndef TH_NN_KEEP_DW_MULT /* th_nn_dw_mult_s8: depthwise, ch_mult > 1, few taps */
#define TH_NN_KEEP_DW_MULT 1
#endif
#ifndef TH_NN_KEEP_CONV_SMALL_CIN /* th_nn_conv_small_cin_s8: Cin 1-3 */
#define TH_NN_KEEP_CONV_SMALL_CIN 1
#endif
#ifndef TH_NN_KEEP_CONV_SMALL_CIN_LINE /* its one-row / one-column images: one filter line */
#define TH_NN_KEEP_CONV_SMALL_CIN_LINE 1
#endif
#ifndef TH_NN_KEEP_CONV_SMALL_CIN_PART /* its Cout % 4 != 0: one-channel blocks for the rest */
#define TH_NN_KEEP_CONV_SMALL_CIN_PART 1
#endif
#ifndef TH_NN_KEEP_CONV_SMALL_CIN_WIDE /* its record streams of 1-2 KB, given the fast scratch */
#define TH_NN_KEEP_CONV_SMALL_CIN_WIDE 1
#endif
#ifndef TH_NN_KEEP_CONV_SMALL_CIN_LONG /* its Cout < 4: fields of 9-16 chunks (fast scratch) */
#define TH_NN_KEEP_CONV_SMALL_CIN_LONG 1
#endif
#ifndef TH_NN_KEEP_CONV_IM2COL /* th_nn_conv_im2col_s8: any filter, groups 1 */
#define TH_NN_KEEP_CONV_IM2COL 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_K8 /* pointwise with Cin 8 */
#define TH_NN_KEEP_CONV1X1_K8 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_FEW /* pointwise, Cout <= 8, widened weights in fast scratch */
#define TH_NN_KEEP_CONV1X1_FEW 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_FEW4 /* ... Cout 4, Cin >= 5, no clamp: one asm loop per pixel */
#define TH_NN_KEEP_CONV1X1_FEW4 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_FEW16 /* ... Cout 9-16, Cin not a multiple of 4 */
#define TH_NN_KEEP_CONV1X1_FEW16 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_ONE /* pointwise with one output pixel, int8 weights read once */
#define TH_NN_KEEP_CONV1X1_ONE 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_PAIRS /* pointwise, Cin a multiple of 4 */
#define TH_NN_KEEP_CONV1X1_PAIRS 1
#endif
#ifndef TH_NN_KEEP_CONV1X1_TAB /* ... with a per-call requantization table */
#define TH_NN_KEEP_CONV1X1_TAB 1
#endif
#ifndef TH_NN_KEEP_MM2_PLAIN /* 2x2 core, fast requantization, no clamp */
#define TH_NN_KEEP_MM2_PLAIN 1
#endif
#ifndef TH_NN_KEEP_MM2_CLAMP /* 2x2 core, fast requantization, clamp */
#define TH_NN_KEEP_MM2_CLAMP 1
#endif
#ifndef TH_NN_KEEP_MM2_MIXED /* 2x2 core, fast for most channels */
#define TH_NN_KEEP_MM2_MIXED 1
#endif
#ifndef TH_NN_KEEP_MM2_TAB /* 2x2 core, requantization table */
#define TH_NN_KEEP_MM2_TAB 1
#endif
#ifndef TH_NN_KEEP_MM_FAST /* any pixel count, fast requantization, no clamp */
#define TH_NN_KEEP_MM_FAST 1
#endif
#ifndef TH_NN_KEEP_MM_MIXED /* any pixel count, fast for most channels */
#define TH_NN_KEEP_MM_MIXED 1
#endif
#ifndef TH_NN_KEEP_IM2COL_BYTES /* one window, Cin not a multiple of 4, K <= 256 */
#define TH_NN_KEEP_IM2COL_BYTES 1
#endif
#ifndef TH_NN_KEEP_IM2COL_WINDOWS /* ... K > 256, 256 bytes at a time */
#define TH_NN_KEEP_IM2COL_WINDOWS 1
#endif
#ifndef TH_NN_KEEP_IM2COL_STAGED /* two windows, Cin % 4 != 0, rows >= 4 bytes, K <= 256 */
#define TH_NN_KEEP_IM2COL_STAGED 1
#endif
#ifndef TH_NN_KEEP_IM2COL_PAIR_ROWS /* staged: a same-row pair crossing an edge, one rows loop */
#define TH_NN_KEEP_IM2COL_PAIR_ROWS 1
#endif
#ifndef TH_NN_KEEP_IM2COL_RUNS /* ... K > 256: row runs widened straight from the input */
#define TH_NN_KEEP_IM2COL_RUNS 1
#endif
#ifndef TH_NN_KEEP_IM2COL_TWO_BYTES /* two windows, Cin % 4 != 0, K <= 128, byte-staged */
#define TH_NN_KEEP_IM2COL_TWO_BYTES 1
#endif
#ifndef TH_NN_KEEP_IM2COL_ROW_PAIR /* two windows of one row, Cin not a multiple of 4 */
#define TH_NN_KEEP_IM2COL_ROW_PAIR 1
#endif
#ifndef TH_NN_KEEP_IM2COL_PAIR_RUN /* two adjacent windows inside, Cin a multiple of 4 */
#define TH_NN_KEEP_IM2COL_PAIR_RUN 1
#endif
#ifndef TH_NN_KEEP_IM2COL_PAIR_CLIPPED /* ... at a padded edge */
#define TH_NN_KEEP_IM2COL_PAIR_CLIPPED 1
#endif
#ifndef TH_NN_KEEP_IM2COL_APART /* two windows inside, apart (stride >= KW) or short rows */
#define TH_NN_KEEP_IM2COL_APART 1
#endif
#ifndef TH_NN_KEEP_IM2COL_SPAN /* K x 1 / 1 x K, Cin % 4 != 0: only a pair's in-range span */
#define TH_NN_KEEP_IM2COL_SPAN 1
#endif
#ifndef TH_NN_KEEP_MM_EXACT /* any pixel count, exact requantization, blocked */
#define TH_NN_KEEP_MM_EXACT 1
#endif
#ifndef TH_NN_KEEP_DW3X3_SMALL_GROUP /* 3x3 depthwise, C = 2 or 3: all planes staged in one pass */
#define TH_NN_KEEP_DW3X3_SMALL_GROUP 1
#endif
#ifndef TH_NN_KEEP_DW3X3_GROUP4 /* ... C >= 4 with the fast scratch: four planes per pass */
#define TH_NN_KEEP_DW3X3_GROUP4 1
#endif
#ifndef TH_NN_KEEP_DW3X3_GROUP3 /* ... its last three of C % 4 == 3: three planes stored */
#define TH_NN_KEEP_DW3X3_GROUP3 1
#endif
#ifndef TH_NN_KEEP_DW3X3_LONE /* ... its last one or two of C % 4 == 1, 2: one plane's rows */
#define TH_NN_KEEP_DW3X3_LONE 1
#endif
#ifndef TH_NN_KEEP_DW3X3_COPY_SHORT /* ... its rows of 1-4 pixel quads copied straight-line */
#define TH_NN_KEEP_DW3X3_COPY_SHORT 1
#endif
#ifndef TH_NN_KEEP_DW3X3_ROWS_PLAIN /* ... tall output kept untransposed: its rows cost less */
#define TH_NN_KEEP_DW3X3_ROWS_PLAIN 1
#endif
#ifndef TH_NN_KEEP_DW3X3_C_FAST /* 3x3 depthwise C loop, fast requantization, no clamp */
#define TH_NN_KEEP_DW3X3_C_FAST 1
#endif
#ifndef TH_NN_KEEP_DW3X3_C_EXACT /* ... any requantization, four outputs at a time */
#define TH_NN_KEEP_DW3X3_C_EXACT 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_EVEN /* 3x3 depthwise assembly rows: stride, block parity */
#define TH_NN_KEEP_DW3X3_S1_EVEN 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_ODD
#define TH_NN_KEEP_DW3X3_S1_ODD 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_EVEN
#define TH_NN_KEEP_DW3X3_S2_EVEN 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_ODD
#define TH_NN_KEEP_DW3X3_S2_ODD 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_FIVE /* ... rows of 4m + 1 outputs, the last five one block: m = 1 */
#define TH_NN_KEEP_DW3X3_S1_FIVE 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_FIVE_EVEN /* ... m - 1 blocks before them, even */
#define TH_NN_KEEP_DW3X3_S1_FIVE_EVEN 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_FIVE_ODD
#define TH_NN_KEEP_DW3X3_S1_FIVE_ODD 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_FIVE
#define TH_NN_KEEP_DW3X3_S2_FIVE 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_FIVE_EVEN
#define TH_NN_KEEP_DW3X3_S2_FIVE_EVEN 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_FIVE_ODD
#define TH_NN_KEEP_DW3X3_S2_FIVE_ODD 1
#endif
#ifndef TH_NN_KEEP_DW3X3_TAIL3 /* ... rows ending in three outputs after the blocks: one tail */
#define TH_NN_KEEP_DW3X3_TAIL3 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_THREE /* ... rows of exactly three outputs (a 3-wide output) */
#define TH_NN_KEEP_DW3X3_S1_THREE 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_THREE
#define TH_NN_KEEP_DW3X3_S2_THREE 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S1_SIX /* ... rows of exactly six outputs (a 6-wide output) */
#define TH_NN_KEEP_DW3X3_S1_SIX 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_SIX
#define TH_NN_KEEP_DW3X3_S2_SIX 1
#endif
#ifndef TH_NN_KEEP_DW3X3_S2_EIGHT /* ... rows of exactly eight outputs, stride 2 */
#define TH_NN_KEEP_DW3X3_S2_EIGHT 1
#endif
#ifndef TH_NN_KEEP_DW_LINES /* general depthwise, channel-inner (th_dw_conv_lines_s8.c) */
#define TH_NN_KEEP_DW_LINES 1
#endif
#ifndef TH_NN_KEEP_DW_PLANE_S1 /* general depthwise plane path, unit stride row kernels */
#define TH_NN_KEEP_DW_PLANE_S1 1
#endif
#ifndef TH_NN_KEEP_DW_PLANE_PHASES /* ... blocks of four across dilation phases */
#define TH_NN_KEEP_DW_PLANE_PHASES 1
#endif
#ifndef TH_NN_KEEP_DW_PLANE_FLAT /* ... blocks of four over a channel's outputs, any rows */
#define TH_NN_KEEP_DW_PLANE_FLAT 1
#endif
#ifndef TH_NN_KEEP_DW_ROWS_KA2 /* general depthwise: the rows path, not the plane path, for
                                * filters two taps across (band words pair the two rows) */
#define TH_NN_KEEP_DW_ROWS_KA2 1
#endif

#ifndef TH_NN_KEEP_ADD_TAB /* ADD rows through both inputs' tables, no clamp */
#define TH_NN_KEEP_ADD_TAB 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_LO /* ... lower clamp */
#define TH_NN_KEEP_ADD_TAB_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_SUB /* SUB rows through both tables */
#define TH_NN_KEEP_ADD_TAB_SUB 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_SUB_LO /* ... lower clamp */
#define TH_NN_KEEP_ADD_TAB_SUB_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_BOTH /* ADD/SUB table rows, both clamps */
#define TH_NN_KEEP_ADD_TAB_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST /* ADD rows, one input broadcast */
#define TH_NN_KEEP_ADD_BCAST 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST_LO
#define TH_NN_KEEP_ADD_BCAST_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST_BOTH
#define TH_NN_KEEP_ADD_BCAST_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST_NEG /* SUB rows, input1 broadcast */
#define TH_NN_KEEP_ADD_BCAST_NEG 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST_NEG_LO
#define TH_NN_KEEP_ADD_BCAST_NEG_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_BCAST_NEG_BOTH
#define TH_NN_KEEP_ADD_BCAST_NEG_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL /* ADD spatial broadcast [rows, C] vs [rows, 1]: one call */
#define TH_NN_KEEP_ADD_SPATIAL 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_LO
#define TH_NN_KEEP_ADD_SPATIAL_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_BOTH
#define TH_NN_KEEP_ADD_SPATIAL_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG /* SUB spatial broadcast, input1 broadcast */
#define TH_NN_KEEP_ADD_SPATIAL_NEG 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG_LO
#define TH_NN_KEEP_ADD_SPATIAL_NEG_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG_BOTH
#define TH_NN_KEEP_ADD_SPATIAL_NEG_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NS /* ... the sign term proven idle (th_add_prep nosign) */
#define TH_NN_KEEP_ADD_SPATIAL_NS 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NS_LO
#define TH_NN_KEEP_ADD_SPATIAL_NS_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NS_BOTH
#define TH_NN_KEEP_ADD_SPATIAL_NS_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG_NS
#define TH_NN_KEEP_ADD_SPATIAL_NEG_NS 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG_NS_LO
#define TH_NN_KEEP_ADD_SPATIAL_NEG_NS_LO 1
#endif
#ifndef TH_NN_KEEP_ADD_SPATIAL_NEG_NS_BOTH
#define TH_NN_KEEP_ADD_SPATIAL_NEG_NS_BOTH 1
#endif

#ifndef TH_NN_KEEP_ADD_SEP_ROWS /* ADD/SUB separable form (th_add_prep sep): a constant a run */
#define TH_NN_KEEP_ADD_SEP_ROWS 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_ROWS_BOTH /* ... both clamps (sep_mode 2) */
#define TH_NN_KEEP_ADD_SEP_ROWS_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_GO /* ... the loop chosen on the host (th_add_prep go): no walk read */
#define TH_NN_KEEP_ADD_GO 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_ROWS4 /* ... runs of n % 4 == 0: n % 8 known, no tests of the tail */
#define TH_NN_KEEP_ADD_SEP_ROWS4 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_ROWS4_BOTH
#define TH_NN_KEEP_ADD_SEP_ROWS4_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_ROWS16 /* ... runs of n == 16: the run straight-line */
#define TH_NN_KEEP_ADD_SEP_ROWS16 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_ROWS16_BOTH
#define TH_NN_KEEP_ADD_SEP_ROWS16_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX1 /* ... runs of n % 4 == 1 four at a time (groups cross runs) */
#define TH_NN_KEEP_ADD_SEP_MIX1 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX2 /* ... n % 4 == 2 */
#define TH_NN_KEEP_ADD_SEP_MIX2 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX3 /* ... n % 4 == 3 */
#define TH_NN_KEEP_ADD_SEP_MIX3 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX1_BOTH /* ... the same, both clamps (sep_mode 2) */
#define TH_NN_KEEP_ADD_SEP_MIX1_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX2_BOTH
#define TH_NN_KEEP_ADD_SEP_MIX2_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIX3_BOTH
#define TH_NN_KEEP_ADD_SEP_MIX3_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ0 /* ... pixels of 2 and 3: the block in straight-line code */
#define TH_NN_KEEP_ADD_SEP_MIXQ0 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ1 /* ... pixels of 5-7 */
#define TH_NN_KEEP_ADD_SEP_MIXQ1 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ2 /* ... pixels of 9-11 */
#define TH_NN_KEEP_ADD_SEP_MIXQ2 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ0_BOTH
#define TH_NN_KEEP_ADD_SEP_MIXQ0_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ1_BOTH
#define TH_NN_KEEP_ADD_SEP_MIXQ1_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_MIXQ2_BOTH
#define TH_NN_KEEP_ADD_SEP_MIXQ2_BOTH 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_SAME /* ... both inputs advancing (same shape) */
#define TH_NN_KEEP_ADD_SEP_SAME 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_SAME_BOTH
#define TH_NN_KEEP_ADD_SEP_SAME_BOTH 1
#endif

#ifndef TH_NN_KEEP_ADD_SEP_CHAN /* ... channel broadcast: the row's table words once */
#define TH_NN_KEEP_ADD_SEP_CHAN 1
#endif
#ifndef TH_NN_KEEP_ADD_SEP_CHAN_BOTH
#define TH_NN_KEEP_ADD_SEP_CHAN_BOTH 1
#endif

#ifndef TH_NN_KEEP_AVG_LANES /* average pool: int16 lane sums, two channels a word */
#define TH_NN_KEEP_AVG_LANES 1
#endif
#ifndef TH_NN_KEEP_AVG_STRIDED /* average pool, strides >= 2: fresh column sums per row */
#define TH_NN_KEEP_AVG_STRIDED 1
#endif
#ifndef TH_NN_KEEP_AVG_STRIDED_PAIRS /* the same, 2 channels, windows 2 wide: no column sums */
#define TH_NN_KEEP_AVG_STRIDED_PAIRS 1
#endif
#ifndef TH_NN_KEEP_AVG_DIRECT_LANES /* average pool, no scratch: int16 lane window sums */
#define TH_NN_KEEP_AVG_DIRECT_LANES 1
#endif
#ifndef TH_NN_KEEP_AVG_DIRECT_SMALL /* the same, 1-3 channels */
#define TH_NN_KEEP_AVG_DIRECT_SMALL 1
#endif
#ifndef TH_NN_KEEP_AVG_GLOBAL /* average pool, one output pixel over whole rows (DSP) */
#define TH_NN_KEEP_AVG_GLOBAL 1
#endif
#ifndef TH_NN_KEEP_AVG_GLOBAL_SMALL /* the same, 1-3 channels */
#define TH_NN_KEEP_AVG_GLOBAL_SMALL 1
#endif
#ifndef TH_NN_KEEP_AVG_SEPARABLE /* average pool: column then window sums in scratch */
#define TH_NN_KEEP_AVG_SEPARABLE 1
#endif
#ifndef TH_NN_KEEP_MAX_LANES /* max pool: column then row maxima, word loops (DSP) */
#define TH_NN_KEEP_MAX_LANES 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_4_5 /* MAX_LANES' stride-1 row pass by running maxima, 4 channels, window 5 wide */
#define TH_NN_KEEP_MAX_VH_4_5 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_4_6 /* ... 4 channels, window 6 */
#define TH_NN_KEEP_MAX_VH_4_6 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_4_7 /* ... 4 channels, window 7 */
#define TH_NN_KEEP_MAX_VH_4_7 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_5_6 /* ... 5 channels, window 6 */
#define TH_NN_KEEP_MAX_VH_5_6 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_5_7 /* ... 5 channels, window 7 */
#define TH_NN_KEEP_MAX_VH_5_7 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_6_5 /* ... 6 channels, window 5 */
#define TH_NN_KEEP_MAX_VH_6_5 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_6_6 /* ... 6 channels, window 6 */
#define TH_NN_KEEP_MAX_VH_6_6 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_6_7 /* ... 6 channels, window 7 */
#define TH_NN_KEEP_MAX_VH_6_7 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_7_5 /* ... 7 channels, window 5 */
#define TH_NN_KEEP_MAX_VH_7_5 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_7_6 /* ... 7 channels, window 6 */
#define TH_NN_KEEP_MAX_VH_7_6 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_7_7 /* ... 7 channels, window 7 */
#define TH_NN_KEEP_MAX_VH_7_7 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_8_5 /* ... 8 channels, window 5 */
#define TH_NN_KEEP_MAX_VH_8_5 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_8_6 /* ... 8 channels, window 6 */
#define TH_NN_KEEP_MAX_VH_8_6 1
#endif
#ifndef TH_NN_KEEP_MAX_VH_8_7 /* ... 8 channels, window 7 */
#define TH_NN_KEEP_MAX_VH_8_7 1
#endif
#ifndef TH_NN_KEEP_MAX_C1_WORDS /* max pool, 1 channel, strides >= 2: padded rows, one call */
#define TH_NN_KEEP_MAX_C1_WORDS 1
#endif
#ifndef TH_NN_KEEP_MAX_DIRECT_LANES /* max pool, no scratch: word loops per window (DSP) */
#define TH_NN_KEEP_MAX_DIRECT_LANES 1
#endif

#ifndef TH_NN_KEEP_ADD_ROW_BCAST /* ADD/SUB rows without tables, one input broadcast */
#define TH_NN_KEEP_ADD_ROW_BCAST 1
#endif
#ifndef TH_NN_KEEP_ADD_CHAN /* ADD/SUB channel broadcast: the row's doubled values once */
#define TH_NN_KEEP_ADD_CHAN 1
#endif
#ifndef TH_NN_KEEP_ADD_CHAN_COL /* ... no clamp, rows >= 8: down the columns, c in a register */
#define TH_NN_KEEP_ADD_CHAN_COL 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_D /* ADD/SUB same shape, many outputs: input1's table doubled */
#define TH_NN_KEEP_ADD_TAB_D 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_LO_D
#define TH_NN_KEEP_ADD_TAB_LO_D 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_SUB_D
#define TH_NN_KEEP_ADD_TAB_SUB_D 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_SUB_LO_D
#define TH_NN_KEEP_ADD_TAB_SUB_LO_D 1
#endif
#ifndef TH_NN_KEEP_ADD_TAB_BOTH_D
#define TH_NN_KEEP_ADD_TAB_BOTH_D 1
#endif
#ifndef TH_NN_KEEP_ADD_CHAN_LUT /* ADD/SUB channel broadcast, many rows: a table a channel */
#define TH_NN_KEEP_ADD_CHAN_LUT 1
#endif
#ifndef TH_NN_KEEP_ADD_LUT /* ADD/SUB scalar broadcast: a 256-byte output table per call */
#define TH_NN_KEEP_ADD_LUT 1
#endif
#ifndef TH_NN_KEEP_ADD_DIRECT /* ADD/SUB without tables: SMMLAR input rescaling */
#define TH_NN_KEEP_ADD_DIRECT 1
#endif
#ifndef TH_NN_KEEP_ADD_DIRECT_LIN /* ... an input scaled by exactly 1/2: one MLA */
#define TH_NN_KEEP_ADD_DIRECT_LIN 1
#endif
#ifndef TH_NN_KEEP_MUL_LUT /* MUL scalar broadcast: a 256-byte output table per call */
#define TH_NN_KEEP_MUL_LUT 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN /* MUL channel broadcast: the row's factors once */
#define TH_NN_KEEP_MUL_CHAN 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E1 /* MUL channel rows, int8, sign term kept: SSAT ASR #1 */
#define TH_NN_KEEP_MUL_CHAN_E1 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E2 /* ... the same, ASR #2 */
#define TH_NN_KEEP_MUL_CHAN_E2 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E3 /* ... the same, ASR #3 */
#define TH_NN_KEEP_MUL_CHAN_E3 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E4 /* ... the same, ASR #4 */
#define TH_NN_KEEP_MUL_CHAN_E4 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E5 /* ... the same, ASR #5 */
#define TH_NN_KEEP_MUL_CHAN_E5 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E6 /* ... the same, ASR #6 */
#define TH_NN_KEEP_MUL_CHAN_E6 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E7 /* ... the same, ASR #7 */
#define TH_NN_KEEP_MUL_CHAN_E7 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_E8 /* ... the same, ASR #8 */
#define TH_NN_KEEP_MUL_CHAN_E8 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_LUT /* MUL channel broadcast, many rows: a table a channel */
#define TH_NN_KEEP_MUL_CHAN_LUT 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL /* MUL spatial broadcast: the row loop in one call */
#define TH_NN_KEEP_MUL_SPATIAL 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_NS /* ... the sign term proven idle (th_mul_prep nosign) */
#define TH_NN_KEEP_MUL_SPATIAL_NS 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E1 /* MUL spatial, int8, sign term kept: SSAT ASR #1 (e = -shift) */
#define TH_NN_KEEP_MUL_SPATIAL_E1 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E2 /* ... the same, ASR #2 */
#define TH_NN_KEEP_MUL_SPATIAL_E2 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E3 /* ... the same, ASR #3 */
#define TH_NN_KEEP_MUL_SPATIAL_E3 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E4 /* ... the same, ASR #4 */
#define TH_NN_KEEP_MUL_SPATIAL_E4 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E5 /* ... the same, ASR #5 */
#define TH_NN_KEEP_MUL_SPATIAL_E5 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E6 /* ... the same, ASR #6 */
#define TH_NN_KEEP_MUL_SPATIAL_E6 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E7 /* ... the same, ASR #7 */
#define TH_NN_KEEP_MUL_SPATIAL_E7 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_E8 /* ... the same, ASR #8 */
#define TH_NN_KEEP_MUL_SPATIAL_E8 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_PAIRS /* ... C % 8 == 0, aligned: word pairs in assembly */
#define TH_NN_KEEP_MUL_SPATIAL_PAIRS 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_LINE /* ... one MLA an output (th_mul_prep line proven) */
#define TH_NN_KEEP_MUL_SPATIAL_LINE 1
#endif
#ifndef TH_NN_KEEP_MUL_SPATIAL_LINE_PX /* ... clamped, C >= 4: the pixel loop in assembly */
#define TH_NN_KEEP_MUL_SPATIAL_LINE_PX 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E1 /* MUL scalar, int8, sign term, host-chosen (sc): asm, SSAT ASR #1 */
#define TH_NN_KEEP_MUL_SCALAR_E1 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E2 /* ... the same, ASR #2 */
#define TH_NN_KEEP_MUL_SCALAR_E2 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E3 /* ... the same, ASR #3 */
#define TH_NN_KEEP_MUL_SCALAR_E3 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E4 /* ... the same, ASR #4 */
#define TH_NN_KEEP_MUL_SCALAR_E4 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E5 /* ... the same, ASR #5 */
#define TH_NN_KEEP_MUL_SCALAR_E5 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E6 /* ... the same, ASR #6 */
#define TH_NN_KEEP_MUL_SCALAR_E6 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E7 /* ... the same, ASR #7 */
#define TH_NN_KEEP_MUL_SCALAR_E7 1
#endif
#ifndef TH_NN_KEEP_MUL_SCALAR_E8 /* ... the same, ASR #8 */
#define TH_NN_KEEP_MUL_SCALAR_E8 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_LINE /* MUL channel rows on th_mul_prep's proven line */
#define TH_NN_KEEP_MUL_CHAN_LINE 1
#endif
#ifndef TH_NN_KEEP_MUL_CHAN_LINE_FLAT /* ... clamped, lcm(C, 4) <= 32: rows as one flat run */
#define TH_NN_KEEP_MUL_CHAN_LINE_FLAT 1
#endif
#ifndef TH_NN_KEEP_MUL_ROW_LINE /* MUL rows of one factor (scalar) on the proven line */
#define TH_NN_KEEP_MUL_ROW_LINE 1
#endif

#ifndef TH_NN_KEEP_FC_ROWS /* th_nn_fc_s8: whole blocks in one loop (no filter offset) */
#define TH_NN_KEEP_FC_ROWS 1
#endif
#ifndef TH_NN_KEEP_FC_SHORT /* th_nn_fc_s8: inputs <= 128, widened once per row (stack) */
#define TH_NN_KEEP_FC_SHORT 1
#endif
#ifndef TH_NN_KEEP_FC_SHORT_FULL /* th_nn_fc_s8: FC_SHORT, the full int8 range (no clamp) */
#define TH_NN_KEEP_FC_SHORT_FULL 1
#endif
#ifndef TH_NN_KEEP_FC_SHORT_ONE /* th_nn_fc_s8: FC_SHORT, inputs <= 32: the dot one pass */
#define TH_NN_KEEP_FC_SHORT_ONE 1
#endif
#ifndef TH_NN_KEEP_FC_W16_TENSOR /* th_fc_s8_w16: whole blocks, fast per-tensor requant */
#define TH_NN_KEEP_FC_W16_TENSOR 1
#endif
#ifndef TH_NN_KEEP_FC_W16_CHANNEL /* th_fc_s8_w16: whole blocks, fast per-channel requant */
#define TH_NN_KEEP_FC_W16_CHANNEL 1
#endif
#ifndef TH_NN_KEEP_FC_W16_FULL /* th_fc_s8_w16's row loop, int8's whole range: no clamp */
#define TH_NN_KEEP_FC_W16_FULL 1
#endif
#ifndef TH_NN_KEEP_FC_W16_UNROLL4 /* th_fc_s8_w16: inputs >= 128, dot four chunks per pass */
#define TH_NN_KEEP_FC_W16_UNROLL4 1
#endif

#ifndef TH_NN_KEEP_MM_LAST_CHANNEL /* the last channel of an odd count, its own loop */
#define TH_NN_KEEP_MM_LAST_CHANNEL 1
#endif

#endif
