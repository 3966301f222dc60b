/// What CAF 0.17.6's synchronisation means, told to ThreadSanitizer.
///
/// Debian's libcaf_core is not instrumented, so TSan sees neither its
/// lock-free mailboxes nor its atomic reference counts: every message would
/// look like a race between the sender's writes and the receiver's reads,
/// and every actor or message freed by another thread like a race with its
/// construction. tests/sanitize/run.sh builds this file into a small
/// shared library (not instrumented itself) and preloads it into the
/// processes of the TSan stage. It defines a few of libcaf's exported
/// functions again; libcaf calls its own exported functions through the PLT
/// and our code calls them directly, so these definitions replace CAF's in
/// every caller, and each one calls CAF's own (found with dlsym) or does
/// exactly what CAF's does. Around them it adds the happens-before edges
/// CAF provides:
///
///   sender: scheduled_actor::enqueue ── release(actor) ─┐
///   spawner: scheduled_actor::launch ── release(actor) ─┤
///                                                        ▼
///   worker: resume / activate / reactivate / consume / finalize / cleanup
///           ── acquire(actor),
///           then the handler, then release(actor) for whichever worker
///           resumes the actor next
///   blocking_actor::enqueue ── release(actor) ──▶ await_data ── acquire(actor)
///   ref_counted::deref, intrusive_ptr_release(actor_control_block*) and
///   intrusive_ptr_release_weak: release before each decrement, acquire
///   before the deletion (what an acq_rel decrement means)
///
/// The annotations are keyed by the actor's address (the reference count's
/// for releases), so an edge links exactly what CAF links: one actor's
/// senders to that actor, one object's owners to its deleter. Races between
/// our threads outside these edges (an I/O thread and a swarm touching the
/// same data without a lock or a message) are still reported.
///
/// In a process without TSan (python, ctest) the __tsan_* functions are
/// absent (weak) and every function here behaves exactly as CAF's.
///
/// The bodies of ref_counted::deref, intrusive_ptr_release and
/// intrusive_ptr_release_weak follow CAF 0.17.6 (libcaf_core/src/
/// ref_counted.cpp and actor_control_block.cpp, BSD-3-Clause).

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include <caf/actor_control_block.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/ref_counted.hpp>
#include <caf/scheduled_actor.hpp>

extern "C" {
void __tsan_acquire(void* addr) __attribute__((weak));
void __tsan_release(void* addr) __attribute__((weak));
}

namespace {

void acquire(const volatile void* addr) {
  if (__tsan_acquire != nullptr) __tsan_acquire(const_cast<void*>(addr));
}

void release(const volatile void* addr) {
  if (__tsan_release != nullptr) __tsan_release(const_cast<void*>(addr));
}

/// CAF's own definition of `symbol`, the next one after this library.
template <class F>
F real(const char* symbol) {
  void* f = dlsym(RTLD_NEXT, symbol);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_caf_sync: %s not found in libcaf (not CAF 0.17.6?)\n", symbol);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

}  // namespace

namespace caf {

// -- reference counts -----------------------------------------------------------

void ref_counted::deref() const noexcept {
  if (unique()) {
    acquire(&rc_);
    request_deletion(false);
    return;
  }
  release(&rc_);
  if (rc_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    acquire(&rc_);
    request_deletion(true);
  }
}

void intrusive_ptr_release_weak(actor_control_block* x) {
  if (x->weak_refs == 1) {
    acquire(&x->weak_refs);
    x->block_dtor(x);
    return;
  }
  release(&x->weak_refs);
  if (x->weak_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    acquire(&x->weak_refs);
    x->block_dtor(x);
  }
}

void intrusive_ptr_release(actor_control_block* x) {
  release(&x->strong_refs);
  if (x->strong_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    acquire(&x->strong_refs);
    x->data_dtor(x->get());
    intrusive_ptr_release_weak(x);
  }
}

// -- event-based actors ---------------------------------------------------------

void scheduled_actor::enqueue(mailbox_element_ptr ptr, execution_unit* eu) {
  using fn = void (*)(scheduled_actor*, mailbox_element_ptr, execution_unit*);
  static const fn f = real<fn>(
      "_ZN3caf15scheduled_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_"
      "6detail8disposerEEPNS_14execution_unitE");
  release(this);
  f(this, std::move(ptr), eu);
}

void scheduled_actor::launch(execution_unit* eu, bool lazy, bool hide) {
  using fn = void (*)(scheduled_actor*, execution_unit*, bool, bool);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor6launchEPNS_14execution_unitEbb");
  release(this);
  f(this, eu, lazy, hide);
}

// The compiler also emits the non-virtual thunk the schedulers call through
// (resumable is a base at an offset), which replaces libcaf's the same way.
resumable::resume_result scheduled_actor::resume(execution_unit* eu, size_t max_throughput) {
  using fn = resumable::resume_result (*)(scheduled_actor*, execution_unit*, size_t);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor6resumeEPNS_14execution_unitEm");
  acquire(this);
  const auto result = f(this, eu, max_throughput);
  // The handlers below already released; this covers what ran after them.
  release(this);
  return result;
}

bool scheduled_actor::activate(execution_unit* eu) {
  using fn = bool (*)(scheduled_actor*, execution_unit*);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor8activateEPNS_14execution_unitE");
  acquire(this);
  const bool result = f(this, eu);
  release(this);
  return result;
}

scheduled_actor::activation_result scheduled_actor::reactivate(mailbox_element& x) {
  using fn = activation_result (*)(scheduled_actor*, mailbox_element&);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor10reactivateERNS_15mailbox_elementE");
  acquire(this);
  const auto result = f(this, x);
  // Before the mailbox may block the actor and another worker resume it.
  release(this);
  return result;
}

invoke_message_result scheduled_actor::consume(mailbox_element& x) {
  using fn = invoke_message_result (*)(scheduled_actor*, mailbox_element&);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor7consumeERNS_15mailbox_elementE");
  acquire(this);
  const auto result = f(this, x);
  release(this);
  return result;
}

// An actor that terminates deletes the messages still in its mailbox
// (finalize -> cleanup) without consuming them.
bool scheduled_actor::finalize() {
  using fn = bool (*)(scheduled_actor*);
  static const fn f = real<fn>("_ZN3caf15scheduled_actor8finalizeEv");
  acquire(this);
  const bool result = f(this);
  release(this);
  return result;
}

bool scheduled_actor::cleanup(error&& fail_state, execution_unit* host) {
  using fn = bool (*)(scheduled_actor*, error&&, execution_unit*);
  static const fn f =
      real<fn>("_ZN3caf15scheduled_actor7cleanupEONS_5errorEPNS_14execution_unitE");
  acquire(this);
  const bool result = f(this, std::move(fail_state), host);
  release(this);
  return result;
}

// -- blocking actors (scoped_actor in tests and tools) ------------------------

void blocking_actor::enqueue(mailbox_element_ptr ptr, execution_unit* eu) {
  using fn = void (*)(blocking_actor*, mailbox_element_ptr, execution_unit*);
  static const fn f = real<fn>(
      "_ZN3caf14blocking_actor7enqueueESt10unique_ptrINS_15mailbox_elementENS_"
      "6detail8disposerEEPNS_14execution_unitE");
  release(this);
  f(this, std::move(ptr), eu);
}

void blocking_actor::await_data() {
  using fn = void (*)(blocking_actor*);
  static const fn f = real<fn>("_ZN3caf14blocking_actor10await_dataEv");
  f(this);
  acquire(this);
}

bool blocking_actor::await_data(timeout_type timeout) {
  using fn = bool (*)(blocking_actor*, timeout_type);
  static const fn f = real<fn>(
      "_ZN3caf14blocking_actor10await_dataENSt6chrono10time_pointINS1_3_V212system_"
      "clockENS1_8durationIlSt5ratioILl1ELl1000000000EEEEEE");
  const bool result = f(this, timeout);
  acquire(this);
  return result;
}

}  // namespace caf
