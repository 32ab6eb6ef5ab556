#!/usr/bin/env bash
# loss.sh N: drop N per mille of the frames the bridge forwards to hosts other than pfh0 (0: none)
ip netns exec pfsw nft delete table bridge chaos 2>/dev/null
[ "$1" = 0 ] && exit 0
ip netns exec pfsw nft add table bridge chaos
ip netns exec pfsw nft 'add chain bridge chaos f { type filter hook forward priority 0; }'
ip netns exec pfsw nft add rule bridge chaos f oifname != "p0" numgen random mod 1000 '<' $1 counter drop
