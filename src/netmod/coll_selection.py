#!/usr/bin/env python3
"""coll_selection.py OURS MPICH_TREE - put bipmpi's collective selection in
front of MPICH's.

MPICH chooses a collective's algorithm by walking a JSON decision tree: at
each level the first key whose test holds is taken (its children next), the
others are tried in order when it fails, and a walk that runs out of keys
finds nothing. MPICH compiles its trees (maint/tuning/coll/{mpir,ch4}/
generic.json) into libmpi. This writes those two files with our rules
(OURS, see coll_selection.json) grafted in: at every level of one of our
rules, MPICH's subtree for that collective follows as the fallback, so every
walk that our rules do not finish ends in MPICH's choice. MPICH's own files
are kept beside them as generic.json.mpich, so running this again starts
from them.
"""
import copy
import json
import os
import shutil
import sys

# A key of ours that stands for several of MPICH's (tried in this order).
PSEUDO = {"node=one": ["comm_size=node_comm_size", "comm_hierarchy=node"]}
LEAF_PREFIXES = ("algorithm=", "composition=")


def fail(msg):
    sys.exit("coll_selection.py: error: " + msg)


def is_leaf(tree):
    return any(k.startswith(LEAF_PREFIXES) for k in tree)


def graft(ours, fallback):
    out = {}
    for key, sub in ours.items():
        if not is_leaf(sub):
            sub = graft(sub, fallback)
        for k in PSEUDO.get(key, [key]):
            out[k] = copy.deepcopy(sub)
    # A level of ours that ends in a test that always holds decides every
    # walk (and MPICH refuses anything behind such a test).
    if any(k.endswith("=any") for k in out):
        return out
    if is_leaf(fallback):
        # a choice cannot share a level with tests: behind ours, a test
        # that always holds leads to it
        fallback = {"comm_size=any": fallback}
    # A key of ours leads to a complete subtree (it has the fallback
    # inside), so the same test of MPICH's after it could never be reached.
    for key, sub in fallback.items():
        out.setdefault(key, sub)
    return out


def merge(ours, generic, layer):
    out = copy.deepcopy(generic)
    for coll, rules in ours.items():
        if coll not in generic:
            fail("%s: %s is not in MPICH's tree" % (layer, coll))
        for comm_type, tree in rules.items():
            if comm_type not in generic[coll]:
                fail("%s/%s: no %s in MPICH's tree" % (layer, coll, comm_type))
            out[coll][comm_type] = graft(tree, generic[coll][comm_type])
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        ours = json.load(f)
    for layer in ("mpir", "ch4"):
        path = os.path.join(sys.argv[2], "maint/tuning/coll", layer, "generic.json")
        pristine = path + ".mpich"
        if not os.path.exists(pristine):
            shutil.copyfile(path, pristine)
        with open(pristine) as f:
            generic = json.load(f)
        merged = merge(ours.get(layer, {}), generic, layer)
        with open(path + ".tmp", "w") as f:
            json.dump(merged, f, indent=4)
            f.write("\n")
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
