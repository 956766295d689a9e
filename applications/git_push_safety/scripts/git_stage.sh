#!/bin/sh
# Stage the changes for a push (the `git_stage` recipe), on a throwaway repository: an
# initial commit on main, then the branch's working-tree changes staged. A push straight to
# `main` stages a developer's env file holding an AWS access key (what the scan must find).
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
branch=main
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in branch=*) branch=${1#branch=} ;; esac ;;
  esac
  shift
done
root="${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}"
rm -rf "$root"
mkdir -p "$root"
export GIT_AUTHOR_NAME=cuga-flo GIT_AUTHOR_EMAIL=demo@cuga-flo.invalid
export GIT_COMMITTER_NAME=cuga-flo GIT_COMMITTER_EMAIL=demo@cuga-flo.invalid
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git init -q --bare "$root/origin.git"
git init -q -b main "$root/work"
cd "$root/work"
git config commit.gpgsign false
git remote add origin "$root/origin.git"
mkdir -p src docs
printf '# Demo service\n\nRun `make` to build.\n' > README.md
printf 'def login(user):\n    return user\n' > src/login.py
git add -A
git commit -q -m "initial commit"
git push -q origin main
if [ "$branch" != main ]; then
  git checkout -q -b "$branch"
fi
printf 'def login(user, password):\n    return check(user, password)\n' > src/login.py
printf 'def check(user, password):\n    return bool(user and password)\n' > src/auth.py
printf '# Login\n\nUsers sign in with a password.\n' > docs/login.md
if [ "$branch" = main ]; then
  mkdir -p config
  printf 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n' > config/dev.env
fi
git add -A
n=$(git diff --cached --name-only | wc -l | tr -d ' ')
echo "staged $n files on $branch in $root/work" >&2
printf '{"staged_files": %d}\n' "$n"
