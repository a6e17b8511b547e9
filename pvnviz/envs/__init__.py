"""The environments of Section 6 (CartPole, Swimmer) behind one ``BatchedEnv``, their registry and replays."""
