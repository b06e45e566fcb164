"""Writing a plot script's PNG: a file that cannot be written (a full disk,
a folder gone) is one line on stderr and exit 4, with no partial PNG left
behind; the tool that ran the script (tools/plot.cpp) says which file. Not
a traceback."""
import os
import sys


def save(fig, path, **options):
    try:
        fig.savefig(path, dpi=110, **options)
    except OSError as e:
        print(f"{os.path.basename(sys.argv[0])}: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        try:
            os.remove(path)
        except OSError:
            pass
        sys.exit(4)
