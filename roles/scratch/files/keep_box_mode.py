"""Set a scratch box's mode through the directory itself: opened without following a link,
checked as the one object it is (a directory of the expected owner), then changed with fchmod.
The box's owner may swap it for a link at any moment; a path-based chmod would then follow the
link as root. Arguments: the box's path, its owner's UID, the mode in octal digits."""

import os
import stat
import sys


def keep_mode(path, uid, mode):
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        return "%s is no longer a real directory (%s): nothing was changed. Run again." % (path, error.strerror)
    try:
        found = os.fstat(descriptor)
        if found.st_uid != uid:
            return "%s is now UID %d's, not UID %d's: nothing was changed. Run again." % (path, found.st_uid, uid)
        if stat.S_IMODE(found.st_mode) != mode:
            os.fchmod(descriptor, mode)
        return None
    finally:
        os.close(descriptor)


if __name__ == "__main__":
    refusal = keep_mode(sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 8))
    if refusal:
        sys.exit(refusal)
