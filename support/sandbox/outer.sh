#!/bin/bash
# A fresh machine made of this one, for tests/drills/test_operations_doc.py: run by
# `unshare --mount --net --pid --fork --mount-proc`, it mounts an overlay of / (every write
# goes to $RUN/upper; this machine's files stay as they are), brings up a loopback of its
# own (no port of this machine is taken), puts the stand-ins, the doc's shell blocks and
# the code under /drill and chroots into it: inner.sh runs there. When it ends, the pid
# namespace ends every process it started and the mounts go with the mount namespace.
#   SANDBOX (this folder), RUN (upper/, work/, root/), SOURCE (the checkout to clone),
#   WHEELHOUSE (the wheels make install-prod installs, offline), BLOCKS (a folder: the
#   doc's blocks, one NAME.sh each), STORIES (tests/drills/stories.py), LAST_RELEASE and
#   ITS_COMMIT (CHANGELOG.md's newest release), NEXT_RELEASE (the tag the tree under test
#   gets: the release the doc's upgrade goes to)
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
cp $SOURCE/dedupsite/envfile.py $SB/inner.sh $SB/checks.py $SB/smtp_sink.py $STORIES $R/drill/
cp -r $BLOCKS $R/drill/blocks
mount --bind $WHEELHOUSE $R/drill/wheelhouse
# the code under test: HEAD with the working tree's changed and new files, committed
git clone -q $SOURCE $R/drill/dedupsite.git
( cd $SOURCE && { git diff --name-only HEAD; git ls-files --others --exclude-standard; } ) |
    while read -r f; do
        if [ -f "$SOURCE/$f" ]; then
            mkdir -p "$(dirname "$R/drill/dedupsite.git/$f")"
            cp -p "$SOURCE/$f" "$R/drill/dedupsite.git/$f"
        else
            rm -f "$R/drill/dedupsite.git/$f"  # deleted in the working tree
        fi
    done
git -C $R/drill/dedupsite.git add -A
git -C $R/drill/dedupsite.git -c user.name=drill -c user.email=drill@localhost \
    commit -qm "the working tree" --allow-empty
# the releases as tags (this repository may keep none): the last one at its commit, the
# tree under test as the next one, which the doc's upgrade block checks out
git -C $R/drill/dedupsite.git tag -f $LAST_RELEASE $ITS_COMMIT > /dev/null
git -C $R/drill/dedupsite.git tag -f $NEXT_RELEASE HEAD > /dev/null
rm -rf $R/srv/dedupsite
# the doc's `git clone https://git.example.com/dedupsite.git` reaches that copy
printf '[url "/drill/dedupsite.git"]\n\tinsteadOf = https://git.example.com/dedupsite.git\n' > $R/root/.gitconfig
exec chroot $R /drill/inner.sh
