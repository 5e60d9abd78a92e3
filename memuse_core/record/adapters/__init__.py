"""Host and provider adapters (MemUse A.1.1): `miniswe.MiniSweHost` (mini-swe-agent 2.x) and
`mem0.Mem0Provider` (mem0ai 2.x). Import the submodules directly; they need the recording extras
(requirements-recording.txt)."""
