# One-off: rewrites citations of the outside behaviour spec (sch_fq-behavior.md, "spec §N")
# into citations of docs/fq-rules.md. Usage (GNU sed):
#   sed -i -E -f scripts/fq-rules-citations.sed FILES...
# Lines citing docs/results.md or anchors.md sections (also "§N") are left alone.
# Safe to delete once no file cites the spec any more.
/(results|anchors)\.md §/b
s#(/work/|\.\./)?shared/spec/sch_fq-behavior\.md#docs/fq-rules.md#g
s#section 10 of the behavioural spec \(sch_fq-behavior\.md\)#docs/fq-rules.md\#edge-cases#g
s#the section numbers quoted in comments#the anchors quoted in comments#g
s#against the spec's invariants#against the invariants of docs/fq-rules.md#g
s#(here )?from the spec, §#\1from §#g
s#The flow key the spec gives#The flow key docs/fq-rules.md gives#g
s#the spec, §#§#g
s#§3\.1-3\.7#docs/fq-rules.md\#enqueue#g
s#§3\.3-3\.6#docs/fq-rules.md\#classification to \#lookup-allocation-and-socket-reuse#g
s#§4\.3-§4\.8#docs/fq-rules.md\#choosing-a-flow to \#charging#g
s#edge cases §10 items ([0-9]+)-([0-9]+), ([0-9]+), ([0-9]+)#edge cases E\1-E\2, E\3, E\4 (docs/fq-rules.md\#edge-cases)#g
s#edge cases §10 items ([0-9]+), ([0-9]+)#edge cases E\1, E\2 (docs/fq-rules.md\#edge-cases)#g
s#§10 items? ([0-9]+)#docs/fq-rules.md\#edge-cases E\1#g
s#edge case ([0-9]+)#edge case E\1#g
s#(the )?(spec )?§0\.1\b#docs/fq-rules.md\#how-the-kernel-drives-fq#g
s#(the )?(spec )?§1\.1\b#docs/fq-rules.md\#netlink-acceptance#g
s#(the )?(spec )?§3\.1\b#docs/fq-rules.md\#admission-limit#g
s#(the )?(spec )?§3\.2\b#docs/fq-rules.md\#departure-time-and-horizon#g
s#(the )?(spec )?§3\.3\b#docs/fq-rules.md\#classification#g
s#(the )?(spec )?§3\.4\b#docs/fq-rules.md\#fast-path#g
s#(the )?(spec )?§3\.5\b#docs/fq-rules.md\#garbage-collection#g
s#(the )?(spec )?§3\.6\b#docs/fq-rules.md\#lookup-allocation-and-socket-reuse#g
s#(the )?(spec )?§3\.7\b#docs/fq-rules.md\#flow-limit#g
s#(the )?(spec )?§3\.8\b#docs/fq-rules.md\#activation-and-refill#g
s#(the )?(spec )?§3\.9\b#docs/fq-rules.md\#packet-order-in-a-flow#g
s#(the )?(spec )?§4\.10\b#docs/fq-rules.md\#arming-the-watchdog#g
s#(the )?(spec )?§4\.1\b#docs/fq-rules.md\#internal-queue#g
s#(the )?(spec )?§4\.2\b#docs/fq-rules.md\#releasing-throttled-flows#g
s#(the )?(spec )?§4\.3\b#docs/fq-rules.md\#choosing-a-flow#g
s#(the )?(spec )?§4\.4\b#docs/fq-rules.md\#flow-credit#g
s#(the )?(spec )?§4\.5\b#docs/fq-rules.md\#throttling#g
s#(the )?(spec )?§4\.6\b#docs/fq-rules.md\#sending-and-ce-marking#g
s#(the )?(spec )?§4\.7\b#docs/fq-rules.md\#empty-flows#g
s#(the )?(spec )?§4\.8\b#docs/fq-rules.md\#charging#g
s#(the )?(spec )?§4\.9\b#docs/fq-rules.md\#pacing-gap#g
s#(the )?(spec )?§5\.1\b#docs/fq-rules.md\#watchdog-range-rule#g
s#(the )?(spec )?§5\.2\b#docs/fq-rules.md\#hrtimer-expiry#g
s#(the )?(spec )?§5\.3\b#docs/fq-rules.md\#user-space-timer-slack#g
s#(the )?(spec )?§7\.1\b#docs/fq-rules.md\#tc-output#g
s#(the )?(spec )?§10\b#docs/fq-rules.md\#edge-cases#g
s#(the )?(spec )?§0\b#docs/fq-rules.md\#scope-and-conventions#g
s#(the )?(spec )?§1\b#docs/fq-rules.md\#configuration#g
s#(the )?(spec )?§2\b#docs/fq-rules.md\#state#g
s#(the )?(spec )?§3\b#docs/fq-rules.md\#enqueue#g
s#(the )?(spec )?§4\b#docs/fq-rules.md\#dequeue#g
s#(the )?(spec )?§5\b#docs/fq-rules.md\#watchdog-and-timer-slack#g
s#(the )?(spec )?§6\b#docs/fq-rules.md\#change-reset-resize#g
s#(the )?(spec )?§7\b#docs/fq-rules.md\#statistics#g
s#(the )?(spec )?§8\b#docs/fq-rules.md\#tc-parsing-and-units#g
s#(the )?(spec )?§9\b#docs/fq-rules.md\#versions#g
:a
s#(docs/fq-rules\.md\#[a-z0-9-]+.*[,;] (and )?)docs/fq-rules\.md\##\1\##
s#(docs/fq-rules\.md\#[a-z0-9-]+ and )docs/fq-rules\.md\##\1\##
ta
