/*
 * ops_movement.c - data movement of issue 17, int8: SPLIT / SPLIT_V / UNPACK (kernel id 50),
 * PACK (51), GATHER (52), DEPTH_TO_SPACE (53), SPACE_TO_DEPTH (54), RESIZE_NEAREST_NEIGHBOR
 * (55), RESIZE_BILINEAR (56), ARG_MAX (57), ARG_MIN (58). Shapes are checked against the
 * parameter words at load. Parameter words: TH_SPLIT_P_*, TH_GATHER_P_*, TH_BLOCK_P_*,
 * TH_RESIZE_P_* (constants offsets of the host-built int32 tables), TH_ARG_P_*
 * (th_interp_abi.h).
 */
#include "ops_common.h"

/* t seen with `rank` dims: its own, or (UNPACK outputs, PACK inputs) with a 1 inserted at
 * `axis`. 0 if neither fits. */
static int axis_view(const th_interp_tensor *t, uint32_t rank, int32_t axis, th_shape *s)
{
    if (!th_interp_s8_any(t) || rank < 1 || rank > TH_MAX_RANK) {
        return 0;
    }
    if (t->rank == rank) {
        th_interp_to_shape(t, s);
        return 1;
    }
    if (t->rank + 1u != rank) {
        return 0;
    }
    s->rank = (int32_t)rank;
    for (int32_t d = 0, k = 0; d < TH_MAX_RANK; d++) {
        s->dims[d] = d == axis || d >= (int32_t)rank ? 1 : t->dims[k++];
    }
    return 1;
}

/* The tensors on the split side (outputs of SPLIT, inputs of PACK) against the whole one. */
static th_interp_status check_parts(const th_interp_tensor *whole, const th_interp_tensor *parts,
                                    uint32_t n, int32_t axis)
{
    int64_t sum = 0;
    th_shape s;
    if (!th_interp_s8_any(whole) || whole->rank < 1 || axis < 0 || axis >= (int32_t)whole->rank) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t k = 0; k < n; k++) {
        if (!axis_view(&parts[k], whole->rank, axis, &s)) {
            return TH_INTERP_E_PARAMS;
        }
        for (int32_t d = 0; d < (int32_t)whole->rank; d++) {
            if (d != axis && s.dims[d] != whole->dims[d]) {
                return TH_INTERP_E_PARAMS;
            }
        }
        sum += s.dims[axis];
    }
    return sum == whole->dims[axis] ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_split_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_in != 1 || op->n_out < 1 || op->n_params != TH_SPLIT_WORDS) {
        return TH_INTERP_E_PARAMS;
    }
    return check_parts(&op->in[0], op->out, op->n_out, op->params[TH_SPLIT_P_AXIS]);
}

th_interp_status th_interp_split_s8_eval(const th_interp_op *op)
{
    th_split_params sp;
    th_shape si, shapes[TH_INTERP_MAX_OP_OUTPUTS];
    int8_t *outputs[TH_INTERP_MAX_OP_OUTPUTS];
    sp.axis = op->params[TH_SPLIT_P_AXIS];
    sp.num_outputs = (int32_t)op->n_out;
    th_interp_to_shape(&op->in[0], &si);
    for (uint32_t k = 0; k < op->n_out; k++) {
        (void)axis_view(&op->out[k], op->in[0].rank, sp.axis, &shapes[k]);
        outputs[k] = (int8_t *)op->out[k].data;
    }
    return th_interp_kstatus(th_split_s8(NULL, &sp, &si, (const int8_t *)op->in[0].data, shapes,
                                         outputs));
}

th_interp_status th_interp_pack_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    if (op->n_in < 1 || op->n_out != 1 || op->n_params != TH_SPLIT_WORDS) {
        return TH_INTERP_E_PARAMS;
    }
    for (uint32_t k = 0; k < op->n_in; k++) {
        if (op->in[k].rank + 1u != op->out[0].rank) {
            return TH_INTERP_E_PARAMS; /* PACK adds the axis to every input */
        }
    }
    return check_parts(&op->out[0], op->in, op->n_in, op->params[TH_SPLIT_P_AXIS]);
}

th_interp_status th_interp_pack_s8_eval(const th_interp_op *op)
{
    th_concat_params cp;
    th_shape shapes[TH_INTERP_MAX_OP_INPUTS], so;
    const int8_t *inputs[TH_INTERP_MAX_OP_INPUTS];
    cp.axis = op->params[TH_SPLIT_P_AXIS];
    cp.num_inputs = (int32_t)op->n_in;
    for (uint32_t k = 0; k < op->n_in; k++) {
        (void)axis_view(&op->in[k], op->out[0].rank, cp.axis, &shapes[k]);
        inputs[k] = (const int8_t *)op->in[k].data;
    }
    th_interp_to_shape(&op->out[0], &so);
    return th_interp_kstatus(th_concat_s8(NULL, &cp, shapes, inputs, &so,
                                          (int8_t *)op->out[0].data));
}

static void gather_params(const th_interp_op *op, th_gather_params *gp)
{
    gp->batch = op->params[TH_GATHER_P_BATCH];
    gp->outer = op->params[TH_GATHER_P_OUTER];
    gp->axis_size = op->params[TH_GATHER_P_AXIS_SIZE];
    gp->inner = op->params[TH_GATHER_P_INNER];
    gp->coords = op->params[TH_GATHER_P_COORDS];
}

th_interp_status th_interp_gather_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    th_gather_params gp;
    const th_interp_tensor *idx = &op->in[1];
    *scratch = 0;
    if (op->n_in != 2 || op->n_out != 1 || op->n_params != TH_GATHER_WORDS ||
        !th_interp_s8_any(&op->in[0]) || !th_interp_s8_any(&op->out[0]) || !idx->present ||
        idx->data == NULL || idx->dtype != TH_INTERP_INT32) {
        return TH_INTERP_E_PARAMS;
    }
    gather_params(op, &gp);
    if (gp.batch < 1 || gp.outer < 1 || gp.axis_size < 1 || gp.inner < 1 || gp.coords < 0) {
        return TH_INTERP_E_PARAMS;
    }
    const uint64_t rows = (uint64_t)gp.batch * (uint64_t)gp.outer;
    if (rows * (uint64_t)gp.axis_size * (uint64_t)gp.inner != th_interp_elements(&op->in[0]) ||
        (uint64_t)gp.batch * (uint64_t)gp.coords != th_interp_elements(idx) ||
        rows * (uint64_t)gp.coords * (uint64_t)gp.inner != th_interp_elements(&op->out[0])) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_gather_s8_eval(const th_interp_op *op)
{
    th_gather_params gp;
    gather_params(op, &gp);
    return th_interp_kstatus(th_gather_s8(NULL, &gp, (const int8_t *)op->in[0].data,
                                          (const int32_t *)op->in[1].data,
                                          (int8_t *)op->out[0].data));
}

static int nhwc_s8(const th_interp_tensor *t, th_dims *d)
{
    if (!th_interp_s8_any(t) || t->rank != 4) {
        return 0;
    }
    d->n = t->dims[0];
    d->h = t->dims[1];
    d->w = t->dims[2];
    d->c = t->dims[3];
    return 1;
}

/* depth (N, H, W, b*b*C) and space (N, H*b, W*b, C) */
static th_interp_status check_block(const th_interp_op *op, const th_interp_tensor *depth,
                                    const th_interp_tensor *space)
{
    th_dims dd, ds;
    const int64_t b = op->n_params == TH_BLOCK_WORDS ? op->params[TH_BLOCK_P_BLOCK] : 0;
    /* b <= 65535 keeps C * b * b inside int64 */
    if (op->n_in != 1 || op->n_out != 1 || b < 1 || b > 65535 || !nhwc_s8(depth, &dd) ||
        !nhwc_s8(space, &ds) || dd.n != ds.n || dd.h * b != ds.h || dd.w * b != ds.w ||
        (int64_t)ds.c * b * b != dd.c) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_depth_to_space_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_block(op, &op->in[0], &op->out[0]);
}

th_interp_status th_interp_space_to_depth_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    *scratch = 0;
    return check_block(op, &op->out[0], &op->in[0]);
}

th_interp_status th_interp_depth_to_space_s8_eval(const th_interp_op *op)
{
    th_dims di, d_o;
    (void)nhwc_s8(&op->in[0], &di);
    (void)nhwc_s8(&op->out[0], &d_o);
    return th_interp_kstatus(th_depth_to_space_s8(NULL, op->params[TH_BLOCK_P_BLOCK], &di,
                                                  (const int8_t *)op->in[0].data, &d_o,
                                                  (int8_t *)op->out[0].data));
}

th_interp_status th_interp_space_to_depth_s8_eval(const th_interp_op *op)
{
    th_dims di, d_o;
    (void)nhwc_s8(&op->in[0], &di);
    (void)nhwc_s8(&op->out[0], &d_o);
    return th_interp_kstatus(th_space_to_depth_s8(NULL, op->params[TH_BLOCK_P_BLOCK], &di,
                                                  (const int8_t *)op->in[0].data, &d_o,
                                                  (int8_t *)op->out[0].data));
}

/* The tables: `group` int32 per output row / column (1 nearest, 3 bilinear). */
static int resize_tables(const th_interp_op *op, uint32_t group, th_resize_tables *t)
{
    th_dims di, d_o;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_RESIZE_WORDS ||
        !nhwc_s8(&op->in[0], &di) || !nhwc_s8(&op->out[0], &d_o) || di.n != d_o.n ||
        di.c != d_o.c) {
        return 0;
    }
    t->rows = th_interp_const(op, op->params[TH_RESIZE_P_ROWS], group * (uint32_t)d_o.h, 4u);
    t->cols = th_interp_const(op, op->params[TH_RESIZE_P_COLS], group * (uint32_t)d_o.w, 4u);
    return t->rows != NULL && t->cols != NULL;
}

th_interp_status th_interp_resize_nearest_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    th_resize_tables t;
    *scratch = 0;
    return resize_tables(op, 1u, &t) ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_resize_bilinear_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    th_resize_tables t;
    *scratch = 0;
    return resize_tables(op, 3u, &t) ? TH_INTERP_OK : TH_INTERP_E_PARAMS;
}

th_interp_status th_interp_resize_nearest_s8_eval(const th_interp_op *op)
{
    th_resize_tables t;
    th_dims di, d_o;
    (void)resize_tables(op, 1u, &t);
    (void)nhwc_s8(&op->in[0], &di);
    (void)nhwc_s8(&op->out[0], &d_o);
    return th_interp_kstatus(th_resize_nearest_s8(NULL, &t, &di, (const int8_t *)op->in[0].data,
                                                  &d_o, (int8_t *)op->out[0].data));
}

th_interp_status th_interp_resize_bilinear_s8_eval(const th_interp_op *op)
{
    th_resize_tables t;
    th_dims di, d_o;
    (void)resize_tables(op, 3u, &t);
    (void)nhwc_s8(&op->in[0], &di);
    (void)nhwc_s8(&op->out[0], &d_o);
    return th_interp_kstatus(th_resize_bilinear_s8(NULL, &t, &di,
                                                   (const int8_t *)op->in[0].data, &d_o,
                                                   (int8_t *)op->out[0].data));
}

static void arg_params(const th_interp_op *op, th_arg_params *ap)
{
    ap->outer = op->params[TH_ARG_P_OUTER];
    ap->axis_size = op->params[TH_ARG_P_AXIS_SIZE];
    ap->inner = op->params[TH_ARG_P_INNER];
}

static th_interp_status arg_prepare(const th_interp_op *op, uint32_t *scratch)
{
    th_arg_params ap;
    const th_interp_tensor *y = &op->out[0];
    *scratch = 0;
    if (op->n_in != 1 || op->n_out != 1 || op->n_params != TH_ARG_WORDS ||
        !th_interp_s8_any(&op->in[0]) || !y->present || y->data == NULL ||
        y->dtype != TH_INTERP_INT32) {
        return TH_INTERP_E_PARAMS;
    }
    arg_params(op, &ap);
    if (ap.outer < 1 || ap.axis_size < 1 || ap.inner < 1 ||
        (uint64_t)ap.outer * (uint64_t)ap.axis_size * (uint64_t)ap.inner !=
            th_interp_elements(&op->in[0]) ||
        (uint64_t)ap.outer * (uint64_t)ap.inner != th_interp_elements(y)) {
        return TH_INTERP_E_PARAMS;
    }
    return TH_INTERP_OK;
}

th_interp_status th_interp_arg_max_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return arg_prepare(op, scratch);
}

th_interp_status th_interp_arg_min_s8_prepare(const th_interp_op *op, uint32_t *scratch)
{
    return arg_prepare(op, scratch);
}

th_interp_status th_interp_arg_max_s8_eval(const th_interp_op *op)
{
    th_arg_params ap;
    arg_params(op, &ap);
    return th_interp_kstatus(th_arg_max_s8(NULL, &ap, (const int8_t *)op->in[0].data,
                                           (int32_t *)op->out[0].data));
}

th_interp_status th_interp_arg_min_s8_eval(const th_interp_op *op)
{
    th_arg_params ap;
    arg_params(op, &ap);
    return th_interp_kstatus(th_arg_min_s8(NULL, &ap, (const int8_t *)op->in[0].data,
                                           (int32_t *)op->out[0].data));
}
