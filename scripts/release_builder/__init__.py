# Copyright: Pharos HPC engineering
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The release builder's code, which only scripts/pharos-release-build runs (docs/release.md,
"Building").

It lives beside the script rather than in plugins/module_utils: it runs on a platform
maintainer's machine with the network and pip, never on a Site host nor inside a module, and
scripts/ does not ship in the collection (galaxy.yml build_ignore). What the builder and the
installer must agree on, the manifest's rules, SHA256SUMS's checks and the signature, it takes
from module_utils/release/, so both read one format.
"""
