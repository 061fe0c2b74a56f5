#!/bin/bash
# A fresh machine made of this one, for tests/drills/test_operations_doc.py: run by
# `unshare --mount --net --pid --fork --mount-proc`, it mounts an overlay of / (every write
# goes to $RUN/upper; this machine's files stay as they are), brings up a loopback of its
# own (no port of this machine is taken), puts the stand-ins, the doc's block and the code
# under /drill and chroots into it: inner.sh runs there. When it ends, the pid namespace
# ends every process it started and the mounts go with the mount namespace.
#   SANDBOX (this folder), RUN (upper/, work/, root/), SOURCE (the checkout to clone),
#   WHEELHOUSE (the wheels make install-prod installs, offline), DOC_BLOCK (a file)
set -euo pipefail
SB=$SANDBOX
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=/,upperdir=$RUN/upper,workdir=$RUN/work $RUN/root
R=$RUN/root
mount -t proc proc $R/proc
mount --rbind /dev $R/dev
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs tmpfs $R/run
mount -t tmpfs tmpfs $R/tmp
ip link set lo up
mkdir -p $R/drill/bin $R/drill/wheelhouse
cp $SB/systemctl $SB/apt-get $R/drill/bin/
cp $SOURCE/dedupsite/envfile.py $SB/inner.sh $SB/checks.py $R/drill/
cp $DOC_BLOCK $R/drill/doc.sh
mount --bind $WHEELHOUSE $R/drill/wheelhouse
# the code under test: HEAD with the working tree's changed and new files, committed
git clone -q $SOURCE $R/drill/dedupsite.git
( cd $SOURCE && { git diff --name-only HEAD; git ls-files --others --exclude-standard; } ) |
    while read -r f; do
        if [ -f "$SOURCE/$f" ]; then
            mkdir -p "$(dirname "$R/drill/dedupsite.git/$f")"
            cp -p "$SOURCE/$f" "$R/drill/dedupsite.git/$f"
        fi
    done
git -C $R/drill/dedupsite.git add -A
git -C $R/drill/dedupsite.git -c user.name=drill -c user.email=drill@localhost \
    commit -qm "the working tree" --allow-empty
rm -rf $R/srv/dedupsite
# the doc's `git clone https://git.example.com/dedupsite.git` reaches that copy
printf '[url "/drill/dedupsite.git"]\n\tinsteadOf = https://git.example.com/dedupsite.git\n' > $R/root/.gitconfig
exec chroot $R /drill/inner.sh
