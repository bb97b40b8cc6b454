"""Reusable traversal operators that the algorithm families compose (as Gunrock's advance and
filter), each with its CPU and GPU form where it has one:

- :mod:`.frontier` / :mod:`.frontier_gpu` (+ ``frontier.cu``): frontier advance; on the GPU with
  Unified Degree Cut (EtaGraph), the top-down and bottom-up BFS steps and the near-far relax;
- :mod:`.subway` / :mod:`.subway_gpu` (+ ``subway.cu``, ``streaming.cu``): subgraph streaming
  (Subway) for traversals past the device budget: SubCSR gather of the active vertices;
- :mod:`.edge_stream`: edge-chunk streaming (WolfGraph) for all-active algorithms;
- :mod:`.page_stream`: slotted pages streamed from storage (GTS);
- :mod:`.metrics`: what the streamed operators report to EXPLAIN ANALYZE.

Each streamed operator takes the numeric step of an algorithm from its family and its budget
from the :class:`~graphdb.executor.algorithms.spec.OperatorConfig` the physical planner filled.
"""
