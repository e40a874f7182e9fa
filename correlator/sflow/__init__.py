"""sFlow v5: decoding datagrams down to RoCEv2 transport headers, and receiving them."""
