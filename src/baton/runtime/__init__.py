"""Layer 4: profiles, discovery, process lanes, sessions, turns, permissions and recovery."""
