// The admin page (docs/admin.md, "The page"): /status for a browser. The
// server renders the page (RenderStatusHtml: the live section below, then
// the details as of the request); its script, served from this port as
// /status.js, polls /status.json (with each destination's history, see
// status_history.h) and /api/destinations, draws a row per destination with
// sparklines of rows/s and lag, and sends stop/start/restart to the admin API
// after a confirm(), with the token typed into the page (kept in the tab's
// sessionStorage, never written into the HTML by the server).
//
// Nothing is inline: the page's Content-Security-Policy allows scripts,
// styles and requests from this origin only (no 'unsafe-inline'), and the
// script inserts what the server sends as text, never as markup.
#pragma once

#include <string_view>

namespace canal::server {

// GET /status.js and /status.css.
std::string_view AdminPageScript();
std::string_view AdminPageStyle();
// The live section of /status.html: the token field, the message line, the
// destinations table the script fills.
std::string_view AdminPageSection();

// The headers of the page: a strict policy (this origin only, no framing:
// the page has buttons that change the server), no sniffing, no referrer.
inline constexpr const char* kAdminPageCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace canal::server
