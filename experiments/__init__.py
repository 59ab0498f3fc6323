"""The experiment runner: grid expansion, seeding, parallel repetitions, result store."""
