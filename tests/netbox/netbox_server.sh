#!/usr/bin/env bash
# Start or stop a throwaway, real NetBox for tests/netbox/ (issue 15, item 4).
#
#   tests/netbox/netbox_server.sh start STATE_DIR   # prints nothing on stdout; writes STATE_DIR/netbox.env
#   tests/netbox/netbox_server.sh stop STATE_DIR
#
# NetBox is the application published on PyPI (package `netbox`, pinned below). It requires Python >= 3.12
# (and Django 6.1), while this project's machines run Debian 12 (Python 3.11). So NetBox runs from a
# minimal Debian 13 (trixie, Python 3.13) root made with debootstrap from Debian's own archive, entered with
# chroot; it shares the host's network, so it serves on 127.0.0.1 like any local process. PostgreSQL and
# Redis are the host's Debian packages (apt-get install postgresql redis-server), each a throwaway instance
# on a free loopback port with its data under STATE_DIR. The chroot is cached in $NETBOX_CHROOT (default
# /var/tmp/roce-tune-netbox/root) and rebuilt only if missing. Needs root (debootstrap, chroot).
#
# STATE_DIR/netbox.env holds NETBOX_URL, NETBOX_TOKEN (a v2 API token of a throwaway superuser, valid only
# for this instance), NETBOX_START_SECONDS and the pids; STATE_DIR/*.log hold the servers' output.
set -euo pipefail

NETBOX_VERSION="${NETBOX_VERSION:-4.7.3}"
NETBOX_CHROOT="${NETBOX_CHROOT:-/var/tmp/roce-tune-netbox/root}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PG_BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"

die() { echo "netbox_server.sh: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
in_root() { chroot "$NETBOX_CHROOT" env -i PATH=/opt/netbox-venv/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
  NETBOX_ROOT=/srv/netbox "$@"; }

build_root() {
  # Debian 13 root with Python 3.13 and what psycopg[c] (a NetBox requirement) compiles against.
  [ -f "$NETBOX_CHROOT/.roce-tune-netbox-$NETBOX_VERSION" ] && return 0
  command -v debootstrap >/dev/null || die "debootstrap missing (apt-get install debootstrap)"
  rm -rf "$NETBOX_CHROOT"; mkdir -p "$NETBOX_CHROOT"
  debootstrap --variant=minbase --include=python3,python3-venv,python3-dev,gcc,libpq-dev,ca-certificates \
    trixie "$NETBOX_CHROOT" "$DEBIAN_MIRROR" >"$NETBOX_CHROOT.debootstrap.log" 2>&1 \
    || die "debootstrap failed, see $NETBOX_CHROOT.debootstrap.log"
  # Name resolution and the host's CA bundle (which trusts this machine's registry access path) for pip.
  cp /etc/resolv.conf "$NETBOX_CHROOT/etc/resolv.conf"
  cat /etc/ssl/certs/ca-certificates.crt >"$NETBOX_CHROOT/etc/ssl/certs/ca-certificates.crt"
  chroot "$NETBOX_CHROOT" python3 -m venv /opt/netbox-venv
  in_root pip install -q --disable-pip-version-check "netbox==$NETBOX_VERSION" \
    || die "pip install netbox==$NETBOX_VERSION failed in $NETBOX_CHROOT"
  touch "$NETBOX_CHROOT/.roce-tune-netbox-$NETBOX_VERSION"
}

start() {
  local state="$1" t0 pg_port redis_port nb_port pw secret pepper srv
  t0=$(date +%s.%N)
  [ -n "$PG_BIN" ] || die "PostgreSQL server missing (apt-get install postgresql)"
  command -v redis-server >/dev/null || die "redis-server missing (apt-get install redis-server)"
  build_root
  mkdir -p "$state"; state="$(cd "$state" && pwd)"
  pg_port=$(free_port); redis_port=$(free_port); nb_port=$(free_port)
  pw=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
  secret=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')
  pepper=$(python3 -c 'import secrets; print(secrets.token_urlsafe(50))')

  # PostgreSQL: own cluster, TCP on loopback only, socket in STATE_DIR (initdb refuses to run as root).
  # STATE_DIR and its parents must be searchable by the postgres user (not under a 0700 directory).
  mkdir -p "$state/pgdata" "$state/pgsock"; echo "$pw" >"$state/pgpw"
  chown postgres: "$state/pgdata" "$state/pgsock" "$state/pgpw"; chmod 600 "$state/pgpw"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$state/pgdata" -A scram-sha-256 --pwfile="$state/pgpw" \
    -U postgres >"$state/initdb.log" 2>&1 || die "initdb failed, see $state/initdb.log"
  rm -f "$state/pgpw"
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$state/pgdata" -l "$state/pgsock/postgresql.log" -w start \
    -o "-h 127.0.0.1 -p $pg_port -k $state/pgsock -c fsync=off" >/dev/null \
    || die "PostgreSQL did not start, see $state/pgsock/postgresql.log"
  PGPASSWORD="$pw" psql -q -h 127.0.0.1 -p "$pg_port" -U postgres -c "CREATE DATABASE netbox" postgres

  # Redis: loopback, no persistence.
  redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --daemonize yes \
    --pidfile "$state/redis.pid" --logfile "$state/redis.log" --dir "$state" || die "redis-server did not start"

  srv="$NETBOX_CHROOT/srv/netbox/$(basename "$state")"
  rm -rf "$srv"; mkdir -p "$srv/conf"
  cat >"$srv/conf/configuration.py" <<CONF
ALLOWED_HOSTS = ['localhost', '127.0.0.1']
DATABASE = {'NAME': 'netbox', 'USER': 'postgres', 'PASSWORD': '$pw', 'HOST': '127.0.0.1', 'PORT': $pg_port,
            'CONN_MAX_AGE': 300}
REDIS = {
    'tasks': {'HOST': '127.0.0.1', 'PORT': $redis_port, 'DATABASE': 0, 'SSL': False},
    'caching': {'HOST': '127.0.0.1', 'PORT': $redis_port, 'DATABASE': 1, 'SSL': False},
}
SECRET_KEY = '$secret'
API_TOKEN_PEPPERS = {1: '$pepper'}
CENSUS_REPORTING_ENABLED = False
RELEASE_CHECK_URL = None
ENFORCE_GLOBAL_UNIQUE = False  # lab inventories put several devices on 127.0.0.1
CONF
  local nbenv=(env NETBOX_ROOT="/srv/netbox/$(basename "$state")")
  in_root "${nbenv[@]}" netbox migrate --no-input >"$state/migrate.log" 2>&1 \
    || die "netbox migrate failed, see $state/migrate.log"
  local token
  token=$(in_root "${nbenv[@]}" netbox shell --no-imports -c "
from users.models import Token, User
u = User.objects.create_superuser('roce-tune', 'roce-tune@localhost', None)
t = Token(user=u, version=2, write_enabled=True, description='roce-tune tests')
t.save()
print('nbt_' + t.key + '.' + t.token)" 2>"$state/token.log" | tail -1) || die "token creation failed, see $state/token.log"
  [[ "$token" == nbt_* ]] || die "token creation failed, see $state/token.log"

  # gunicorn inside the root, detached; its pid (as the host sees it) goes to STATE_DIR.
  setsid chroot "$NETBOX_CHROOT" env -i PATH=/opt/netbox-venv/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 \
    NETBOX_ROOT="/srv/netbox/$(basename "$state")" \
    gunicorn --bind "127.0.0.1:$nb_port" --workers 2 --threads 2 --timeout 120 netbox.wsgi \
    >"$state/netbox.log" 2>&1 </dev/null &
  echo $! >"$state/netbox.pid"
  local url="http://127.0.0.1:$nb_port"
  # /api/status/ needs a token (NetBox 4 has LOGIN_REQUIRED on); up to 120 s for gunicorn to load Django.
  NETBOX_TOKEN="$token" python3 - "$url" "$state/netbox.pid" <<'PY' || die "NetBox did not answer /api/status/ in 120 s, see $state/netbox.log"
import os, sys, time, urllib.request
url, pidfile = sys.argv[1] + "/api/status/", sys.argv[2]
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + os.environ["NETBOX_TOKEN"]})
deadline = time.monotonic() + 120
while True:
    try:
        urllib.request.urlopen(req, timeout=5).read()
        break
    except OSError:
        os.kill(int(open(pidfile).read()), 0)  # gunicorn gone: fail now, not after 120 s
        if time.monotonic() > deadline:
            sys.exit(1)
        time.sleep(0.5)
PY
  {
    echo "NETBOX_URL=$url"
    echo "NETBOX_TOKEN=$token"
    echo "NETBOX_VERSION=$NETBOX_VERSION"
    echo "NETBOX_START_SECONDS=$(python3 -c "import time; print(round(time.time() - $t0, 1))")"
    echo "NETBOX_SRV=$srv"
  } >"$state/netbox.env"
  chmod 600 "$state/netbox.env"
}

stop() {
  local state="$1"
  if [ -f "$state/netbox.pid" ]; then
    kill -- "-$(cat "$state/netbox.pid")" 2>/dev/null || kill "$(cat "$state/netbox.pid")" 2>/dev/null || true
    rm -f "$state/netbox.pid"
  fi
  if [ -f "$state/redis.pid" ]; then kill "$(cat "$state/redis.pid")" 2>/dev/null || true; fi
  if [ -f "$state/pgdata/postmaster.pid" ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$state/pgdata" -m immediate stop >/dev/null 2>&1 || true
  fi
  rm -rf "$NETBOX_CHROOT/srv/netbox/$(basename "$state")"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: $0 start STATE_DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop STATE_DIR"; stop "$2" ;;
  build) build_root ;;
  *) die "usage: $0 start|stop STATE_DIR | build" ;;
esac
