#pragma once
/// The service manager's readiness protocol (sd_notify(3)) without
/// libsystemd: one datagram to the AF_UNIX socket named by $NOTIFY_SOCKET
/// (a path, or an abstract name starting with '@'). Without that variable
/// (not started by systemd with Type=notify) every call does nothing.
///
///   start ─ listeners bound, state loaded ─▶ notify_ready()      READY=1
///   SIGHUP ──────────────────────────────▶ notify_reloading()   RELOADING=1
///          ─ reload done ───────────────▶ notify_ready()       READY=1
///   SIGTERM ─────────────────────────────▶ notify_stopping()    STOPPING=1
///
/// Each call also sends STATUS= with a short line for `systemctl status`.

#include <string>
#include <string_view>

namespace sk::sd {

/// Sends `state` (newline-separated assignments) to $NOTIFY_SOCKET. Returns
/// true when sent, false when there is no socket or the send failed.
bool notify(std::string_view state) noexcept;

bool notify_ready(std::string_view status) noexcept;
bool notify_reloading() noexcept;
bool notify_stopping() noexcept;

}  // namespace sk::sd
