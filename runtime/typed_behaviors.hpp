#pragma once
/// Two helpers for typed actors (CAF 0.17):
///
///   `declares<Interface>(m)`   whether a dynamically typed message is one of
///                              an interface's inputs (a filter for calls
///                              that arrive in an envelope from another node)
///   `compose_behavior<Full>(parts...)`
///                              the behavior of an actor whose handlers are
///                              written in several pieces (one per file or
///                              concern), each a checked `behavior_type` of a
///                              part of the interface; together they must
///                              declare exactly `Full`
///
/// CAF checks each part at compile time (a missing, extra or mistyped handler
/// does not compile); `compose_behavior` checks that the parts add up to the
/// actor's type, so the composed behavior is as safe as one written whole.

#include <type_traits>
#include <utility>

#include <caf/all.hpp>

namespace sk {

namespace detail {
template <class... Is, class O>
bool matches_signature(const caf::message& m, caf::typed_mpi<caf::detail::type_list<Is...>, O>*) {
  return m.match_elements<Is...>();
}
template <class... Sigs>
bool matches_any_signature(const caf::message& m, caf::detail::type_list<Sigs...>) {
  return (matches_signature(m, static_cast<Sigs*>(nullptr)) || ...);
}
template <class Behavior>
struct actor_of_behavior;
template <class... Sigs>
struct actor_of_behavior<caf::typed_behavior<Sigs...>> {
  using type = caf::typed_actor<Sigs...>;
};
}  // namespace detail

/// Whether `m` is one of the messages `Interface` declares (types, atom
/// values and size; the answer types are not looked at).
template <class Interface>
bool declares(const caf::message& m) {
  return detail::matches_any_signature(m, typename Interface::signatures{});
}

/// The behavior of an actor of type `Full` from parts that declare, in this
/// order, exactly `Full`'s signatures (`Full` must be
/// `First::extend_with<Rest...>`).
template <class Full, class First, class... Rest>
typename Full::behavior_type compose_behavior(First first, Rest... rest) {
  using first_actor = typename detail::actor_of_behavior<First>::type;
  static_assert(std::is_same<Full, typename first_actor::template extend_with<
                                       typename detail::actor_of_behavior<Rest>::type...>>::value,
                "the parts must declare exactly the actor's interface, in its order");
  caf::message_handler handlers{first.unbox().as_behavior_impl()};
  ((handlers = handlers.or_else(caf::message_handler{rest.unbox().as_behavior_impl()})), ...);
  return {typename Full::behavior_type::unsafe_init{}, std::move(handlers)};
}

}  // namespace sk
