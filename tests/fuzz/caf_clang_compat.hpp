#pragma once
/// Force-included into the fuzz build's CAF-dependent sources (app/config.cpp
/// and what it links), which are otherwise only ever compiled by GCC.
///
/// CAF 0.17's `caf::string_view` has a `const char*` constructor only when
/// CAF_GCC is defined; under clang it offers a `const char (&)[N]` template
/// instead, and app/config.cpp passes `const char*` names (option tables) and
/// declares `constexpr caf::string_view x = "..."`. Defining CAF_GCC selects
/// the GCC constructor (CAF_GCC otherwise only toggles GCC diagnostic
/// pragmas and two libstdc++ feature checks that are true here), and making
/// its `strlen` the builtin lets clang evaluate it in constant expressions.
/// The macro is undone right after the header, so nothing else sees it.

#include <cstring>

#ifndef CAF_GCC
#define CAF_GCC
#endif
#define strlen(s) __builtin_strlen(s)
#include <caf/string_view.hpp>
#undef strlen
