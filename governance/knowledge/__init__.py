"""Knowledge before risky calls: SOPs and memories that apply to a tool call, put in front of the
model (advisory) or acknowledged first (strict), with their index, detectors and acknowledgments.

May use decisions, policy, ledger, shell and the root modules.
"""
