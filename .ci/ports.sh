# Sourced by .ci/slurm and .ci/postgres: a fixed listening port must lie outside the kernel's
# ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default). Every outgoing
# connection takes a local port from that range, and on the client's side it stays taken for
# 60 s in TIME_WAIT, which blocks a listener's bind() on 127.0.0.1 even with SO_REUSEADDR. The
# suite opens thousands of loopback connections, so a daemon on such a port failed to start
# now and then ("Address already in use"). Needs a die function.

# usage: fixed_port WHAT PORT [LAST]   (LAST: the end of a range that starts at PORT)
fixed_port() {
    local what=$1 first=$2 last=${3:-$2} low high
    read -r low high < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
    if [ "$last" -ge "$low" ] && [ "$first" -le "$high" ]; then
        die "$what port $first${3:+-$last} lies in the kernel's ephemeral range $low-$high, where any outgoing connection can hold it: choose one below $low"
    fi
}
