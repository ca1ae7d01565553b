#!/usr/bin/env bash
# scripts/install-deps.sh as README promises: as root, and as a user with or
# without sudo. A user (nobody) with every package installed needs no sudo; a
# missing package without sudo is a clear refusal naming it; with sudo (a fake
# one on PATH that records its command) apt-get goes through it and nothing else
# does.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
fail=0
check() { if ! eval "$2"; then echo "FAIL: $1"; fail=1; else echo "ok: $1"; fi; }

# A copy the other user can read (a checkout under /root or a 0700 temp dir is not).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- env -i PATH="$1" HOME=/tmp CANAL_DEPS_EXTRA="${2:-}" bash "$work/install-deps.sh"; }

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "SKIP: needs root and setpriv to act as another user"; exit 77
fi
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cp "$repo/scripts/install-deps.sh" "$work/install-deps.sh"
chmod 644 "$work/install-deps.sh"

# Everything installed (CI ran install-deps as root first): nothing to do, no sudo needed.
out=$(as_nobody /usr/bin:/bin 2>&1); rc=$?
check "a user with everything installed: exit 0 (got $rc: $out)" '[ $rc -eq 0 ]'
check "it says so" '[[ "$out" == *"already installed"* ]]'

# A missing package, no sudo: exit 1 naming the package and the way out.
out=$(as_nobody /usr/bin:/bin canal-no-such-package-xyz 2>&1); rc=$?
check "missing without sudo: exit 1 (got $rc)" '[ $rc -eq 1 ]'
check "names the package and sudo ($out)" '[[ "$out" == *"canal-no-such-package-xyz"* && "$out" == *"without sudo"* ]]'

# With sudo: a fake one that records and succeeds; only apt-get goes through it.
mkdir -p "$work/bin"
cat > "$work/bin/sudo" <<'SUDO'
#!/bin/sh
echo "$*" >> "$(dirname "$0")/../sudo.log"
exit 0
SUDO
chmod 755 "$work/bin/sudo"
touch "$work/sudo.log"; chmod 666 "$work/sudo.log"
# policy-rc.d exists on CI machines already or is made through sudo tee; either way through sudo.
out=$(as_nobody "$work/bin:/usr/bin:/bin" canal-no-such-package-xyz 2>&1); rc=$?
log=$(cat "$work/sudo.log")
check "with sudo: exit 0 (got $rc: $out)" '[ $rc -eq 0 ]'
check "apt-get install went through sudo ($log)" '[[ "$log" == *"apt-get install -y -q --no-install-recommends canal-no-such-package-xyz"* ]]'
check "it says so" '[[ "$out" == *"(through sudo)"* ]]'
check "nothing but apt-get, tee and chmod/rm of policy-rc.d through sudo" '! grep -vE "^(apt-get|tee /usr/sbin/policy-rc.d|chmod \+x /usr/sbin/policy-rc.d|rm -f /usr/sbin/policy-rc.d)" "$work/sudo.log"'
exit $fail
