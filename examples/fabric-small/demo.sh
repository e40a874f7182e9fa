#!/bin/sh
# The example fabric, end to end through the CLI: read its Kubernetes objects, build the
# snapshot from the facts, ask where things are, list paths, look at a link and a job,
# attribute a synthetic sFlow capture to tenants and jobs, draw the fabric map, export the
# graph.
set -eu
out=${1:-out}
here=$(dirname "$0")
mkdir -p "$out"
snapshot="$out/topology.json"
run() { printf '\n$ %s\n' "$*"; "$@"; }

run fabcorr inventory interfaces --from "$here/kubernetes"
run fabcorr inventory jobs --from "$here/kubernetes"
run fabcorr topology build --facts "$here/facts.yaml" --out "$snapshot"
export FABCORR_SNAPSHOT="$snapshot"
run fabcorr topology summary
run fabcorr topology where team-a/llm-pretrain-worker-0
run fabcorr topology where 10.102.0.6
run fabcorr topology path team-a/llm-pretrain-worker-0 team-a/llm-pretrain-worker-1
run fabcorr topology link spine01:Ethernet1
run fabcorr topology job team-b/bert-large
run fabcorr simulate capture --flows "$here/flows.yaml" --out "$out/capture.pcap"
run fabcorr sflow decode "$out/capture.pcap" --snapshot "$snapshot" -o wide | head -n 6
run fabcorr attribute --pcap "$out/capture.pcap"
run fabcorr map --pcap "$out/capture.pcap" --out "$out/map.html"
run fabcorr topology export -o dot --kinds switch,port --pcap "$out/capture.pcap" \
  --out "$out/cabling-heat.dot"
for format in graphml gexf json dot cytoscape; do
  run fabcorr topology export -o "$format" --out "$out/fabric.$format"
done
printf '\nexports and map.html written to %s/\n' "$out"
