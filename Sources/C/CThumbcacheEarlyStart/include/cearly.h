#ifndef CEARLY_H
#define CEARLY_H

#include <sys/types.h>

// A worker forked from a constructor, before the runtime starts, when the command line is a
// `thumbcache get` of one PDF or the plug-in's call (`--size N INPUT OUTPUT`) on a PDF, a JPEG or
// a PNG: the child loads its family's libraries (poppler's, a one-file call's longest step) and
// starts while the parent starts, opens its store and looks in it (Docs/PERFORMANCE.md). The
// parent then keeps it for the call or ends it; the child waits on its descriptor 4 for its
// arguments. Linked into those programs alone (`thumbcache`, ThumbcachePlugIn's), never into a
// library an app links, whose command line this would read as theirs.

/// The ends the parent keeps of a worker forked at start.
typedef struct {
    pid_t pid;
    int channel;    // the worker's channel (its descriptor 3 in the child)
    int errors;     // the read end of its standard error
    int arguments;  // where its arguments, then its prepared filter, are written
    char family[12]; // its family, as WorkerFamily names it ("images", "documents")
    char format[8];  // the format the file's first bytes name, as the catalogue does ("pdf")
} cearly_worker;

/// 1 in the child forked at start, which must become the worker at once (`cearly_child` says
/// of which family and format); 0 elsewhere.
int cearly_is_worker(void);

/// In the child forked at start: its family and format, as the parent's record has them.
cearly_worker cearly_child(void);

/// The worker forked at start, once, for the parent: 1 with `worker` filled, else 0.
int cearly_take(cearly_worker *worker);

#endif
