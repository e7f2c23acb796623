#ifndef CTESTPROCESS_H
#define CTESTPROCESS_H

/// The CPUs a worker forked by tc_fork_worker may use: this process's count (`parent`), the
/// child's right after the fork (`child_at_start`) and after it called tc_worker_started
/// (`child_started`). 0, or -1 where a step failed. In C: the child runs nothing but system
/// calls, as a child of a process with threads (the test runner) must.
int ctest_forked_worker_cpus(int *parent, int *child_at_start, int *child_started);

/// The CPUs a thread started by tc_start_thread_beside may use (`thread`) against its
/// creator's (`creator`): 0, or -1 where the thread could not be started.
int ctest_thread_beside_cpus(int *creator, int *thread);

#endif
