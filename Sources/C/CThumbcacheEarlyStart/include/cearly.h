#ifndef CEARLY_H
#define CEARLY_H

#include <sys/types.h>

// A documents worker `thumbcache` forks from a constructor, before its runtime starts, when its
// command line is a `get` of one PDF: the child loads poppler (a one-file call's longest step)
// while the parent starts, opens its store and looks in it (Docs/PERFORMANCE.md). The parent
// then keeps it for the call or ends it; the child waits on its descriptor 4 for its arguments.

/// The ends the parent keeps of a worker forked at start.
typedef struct {
    pid_t pid;
    int channel;    // the worker's channel (its descriptor 3 in the child)
    int errors;     // the read end of its standard error
    int arguments;  // where its arguments, then its prepared filter, are written
} cearly_worker;

/// 1 in the child forked at start, which must become the worker at once; 0 elsewhere.
int cearly_is_worker(void);

/// The worker forked at start, once, for the parent: 1 with `worker` filled, else 0.
int cearly_take(cearly_worker *worker);

#endif
