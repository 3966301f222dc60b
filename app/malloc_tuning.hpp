#pragma once
/// glibc's per-thread malloc cache, sized for the daemon's traffic.
///
/// A CAF worker takes a round of requests from a network thread as one
/// message and sends one message per request to the swarms (up to a round
/// of 32, several rounds when the worker falls behind), then runs those
/// swarms, each freeing its message: a thread that allocates a few dozen
/// blocks of one size, then frees them. glibc's thread cache keeps 7 blocks
/// per size; past that each allocation and each free takes the arena's
/// path (with fastbins off, see `main`, a free merges with its neighbours).
/// A cache of 128 blocks per size serves the pattern: 8.03 -> 7.35 us of
/// tracker CPU per UDP response at 100,000 swarms x 10 peers (three
/// alternating runs each, bench/udp/README.md).
///
/// The cache size is one of glibc's tunables, read from $GLIBC_TUNABLES
/// when a process starts and settable no other way, so the daemon re-executes
/// itself once with `glibc.malloc.tcache_count` added to that variable. An
/// operator's own `glibc.malloc.tcache_count` (7 is glibc's default) is kept
/// as it is. Nothing happens in sanitizer builds (their allocator ignores
/// glibc's tunables), or when the executable cannot be found again (no /proc).

namespace sk {

/// The thread cache's blocks per size the daemon asks for.
inline constexpr int malloc_cache_blocks = 128;

/// Re-executes this program with `argv` and glibc's thread cache enlarged,
/// unless $GLIBC_TUNABLES already names `glibc.malloc.tcache_count` or this
/// process is the re-executed one. Returns only when it did not re-execute
/// (then the environment is as it was). Call first in `main`, before any
/// thread starts.
void reexec_with_malloc_tuning(char** argv);

}  // namespace sk
