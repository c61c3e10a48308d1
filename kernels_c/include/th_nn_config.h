/*
 * th_nn_config.h - which optional kernel paths this build keeps (ARCHITECTURE.md §4.2c).
 *
 * This default keeps every path: the interpreter, whose models come later, needs them all.
 * A compiled model's directory holds its own th_nn_config.h (same guard), which its build
 * forces in first for the sources that name a path and its export puts in place of this
 * one; it sets TH_NN_KEEP_<PATH> to 0 for each path (th_nn_paths.h) its layers never take.
 */
#ifndef TH_NN_CONFIG_H
#define TH_NN_CONFIG_H
#endif
