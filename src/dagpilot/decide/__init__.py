"""Hard constraints and scores, kube-scheduler style, shared by every baseline and the decoder.

`filters` say where a pod may go (each with its reasons), `scores` rank the nodes that pass,
`feasibility` runs the filters over all nodes at once, `scoring` weighs and normalises scores.
"""
