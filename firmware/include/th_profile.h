/*
 * th_profile.h - the profiling-mark contract every backend's invoke keeps (ARCHITECTURE.md
 * §4.7; boards/README.md "Exact instruction latency").
 *
 * A profiled invoke of a model with n_ops ops calls TH_PROFILE_MARK() exactly
 * TH_PROFILE_MARKS(n_ops) times, in this order:
 *   1. once on entry, before anything else;
 *   2. for each op in execution order: right before its kernel call and right after it;
 *   3. once before returning, on success only.
 * The QEMU icount plugin logs the running instruction count at every mark; the host
 * (host/tinyhost/deploy/icount.py, invoke_latency) takes total = last - first - 2 and
 * per-op = after - before - 2, so an invoke that marks anything else breaks the counts.
 * Firmware linking the board library defines TH_PROFILE_ICOUNT_MARK=1 (firmware/app);
 * elsewhere the marks compile away. An unprofiled invoke marks nothing.
 */
#ifndef TH_PROFILE_H
#define TH_PROFILE_H

#define TH_PROFILE_MARKS(n_ops) (2u * (n_ops) + 2u)

#if defined(TH_PROFILE_ICOUNT_MARK) && TH_PROFILE_ICOUNT_MARK
void th_icount_mark(void); /* th_board.h: one `bx lr` the plugin watches */
#define TH_PROFILE_MARK(profile) \
    do {                         \
        if (profile) {           \
            th_icount_mark();    \
        }                        \
    } while (0)
#else
#define TH_PROFILE_MARK(profile) ((void)(profile))
#endif

#endif /* TH_PROFILE_H */
