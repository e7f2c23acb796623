// The Swift runtime of a program linked with --static-swift-stdlib reads its arguments from
// /proc/self/cmdline, so in a sandbox without /proc (a bubblewrap without --proc) every program
// saw none: the plug-in took itself for a worker and exited 0 without a thumbnail. The C library
// hands a constructor the real argc and argv, which are given to the runtime here, before any
// Swift code runs.
extern void _swift_stdlib_overrideUnsafeArgvArgc(char **argv, int argc);

__attribute__((constructor)) static void tc_give_runtime_the_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv) _swift_stdlib_overrideUnsafeArgvArgc(argv, argc);
}
